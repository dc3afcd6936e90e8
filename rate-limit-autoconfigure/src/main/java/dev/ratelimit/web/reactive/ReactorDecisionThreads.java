package dev.ratelimit.web.reactive;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.ratelimit.core.DecisionThreads;

/**
 * {@link DecisionThreads} of a WebFlux application: a store call that can only
 * block runs on Reactor's bounded elastic scheduler, and a wait in wait mode is
 * a {@link Mono#delay} on Reactor's parallel scheduler, whose timer holds no
 * thread while it waits. The default of the bean {@code rateLimitDecisionThreads};
 * a test may replace it, to record waits rather than let time pass.
 */
public final class ReactorDecisionThreads implements DecisionThreads {

	/** The one instance needed: it holds nothing but Reactor's shared schedulers. */
	public static final DecisionThreads INSTANCE = new ReactorDecisionThreads();

	private ReactorDecisionThreads() {
	}

	@Override
	public void execute(Runnable task) {
		Schedulers.boundedElastic().schedule(task);
	}

	@Override
	public CompletionStage<Void> delay(long micros) {
		return Mono.delay(Duration.ofNanos(Math.multiplyExact(micros, 1000L))).<Void>then().toFuture();
	}

}

package dev.ratelimit.gateway;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.web.reactive.ReactorDecisionThreads;

/**
 * The gateway's decision threads, with waits recorded and over at once: a
 * shaping policy's turn is seen to the microsecond without the test waiting
 * for it. What may block still runs on Reactor's bounded elastic scheduler.
 */
final class RecordingDecisionThreads implements DecisionThreads {

	private final List<Long> waits = new CopyOnWriteArrayList<>();

	@Override
	public void execute(Runnable task) {
		ReactorDecisionThreads.INSTANCE.execute(task);
	}

	@Override
	public CompletionStage<Void> delay(long micros) {
		this.waits.add(micros);
		return CompletableFuture.completedFuture(null);
	}

	/** @return the waits so far, in µs, in order */
	List<Long> waits() {
		return List.copyOf(this.waits);
	}

	void clear() {
		this.waits.clear();
	}

}

package dev.ratelimit.blocking;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.KeyedStates;
import dev.ratelimit.core.RateLimitPolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A memory decision on an event loop that meets its key's lock held by
 * another thread waits for it (a decision's arithmetic, tens of nanoseconds,
 * unless the holder is descheduled) by spinning, yielding, then parking
 * briefly: calls BlockHound counts as blocking. The starter's BlockHound
 * integration (found by {@code ServiceLoader} when BlockHound is installed)
 * allows exactly that wait, so that an application testing its event loops
 * with BlockHound does not see a 500 whenever two requests for one key meet.
 */
class ContendedKeyNonBlockingTests {

	static {
		BlockHound.install();
	}

	@Test
	void aDecisionOnAnEventLoopWaitsForItsKeysLockWithoutBlockHoundObjecting() throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.builder("contended").capacity(10).refill("10/1s").build();
		KeyedStates<RateLimitPolicy, Plain> states = new KeyedStates<>((limit, now) -> new Plain(), new KeyBound(100),
				0);
		Scheduler loop = Schedulers.newParallel("event-loop", 1);
		AtomicReference<Thread> waiter = new AtomicReference<>();
		try {
			Plain held = states.lock(policy, "k", 0);
			Mono<Boolean> contended = Mono.fromCallable(() -> {
				waiter.set(Thread.currentThread());
				states.lock(policy, "k", 0).unlock();
				return Schedulers.isInNonBlockingThread();
			}).subscribeOn(loop);
			CompletableFuture<Boolean> decided = contended.toFuture();
			// Released once the event loop is inside the contended wait (or BlockHound stopped it there).
			await().atMost(Duration.ofSeconds(5)).until(() -> decided.isDone() || waitsForTheLock(waiter.get()));
			held.unlock();
			assertThat(decided.get(5, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			loop.dispose();
		}
	}

	private static boolean waitsForTheLock(Thread thread) {
		if (thread == null) {
			return false;
		}
		for (StackTraceElement frame : thread.getStackTrace()) {
			if (frame.getMethodName().equals("lockContended")) {
				return true;
			}
		}
		return false;
	}

	/** A key's state with nothing but its lock. */
	static final class Plain extends KeyedStates.Entry {

	}

}

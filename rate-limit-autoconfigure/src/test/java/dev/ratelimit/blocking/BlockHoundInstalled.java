package dev.ratelimit.blocking;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Installs BlockHound once per JVM, for every test of this package: a blocking
 * call on a non-blocking thread (a Reactor Netty event loop, Lettuce's, a
 * Reactor parallel worker) throws. Lettuce's synchronous wait for a reply
 * parks only when the reply is not there yet, so a fast Redis would let a
 * blocking call go unseen: every such wait counts as blocking, whether it
 * would park or not.
 */
public final class BlockHoundInstalled {

	static {
		BlockHound.install((builder) -> builder
			.markAsBlocking("io.lettuce.core.LettuceFutures", "awaitOrCancel",
					"(Lio/lettuce/core/RedisFuture;JLjava/util/concurrent/TimeUnit;)Ljava/lang/Object;")
			.markAsBlocking("io.lettuce.core.internal.Futures", "awaitOrCancel",
					"(Lio/lettuce/core/RedisFuture;JLjava/util/concurrent/TimeUnit;)Ljava/lang/Object;")
			.markAsBlocking("io.lettuce.core.internal.Futures", "await",
					"(JLjava/util/concurrent/TimeUnit;Ljava/util/concurrent/Future;)Z"));
	}

	private BlockHoundInstalled() {
	}

	/** Makes sure BlockHound is installed: loading this class installs it. */
	public static void ensure() {
	}

	/**
	 * Asserts that BlockHound is watching: a park on a non-blocking thread, as
	 * a lock or a synchronous Redis call would make, fails. A scheduler of its
	 * own: the error leaves its worker unusable, and the shared parallel one
	 * runs timers.
	 */
	public static void assertWatching() {
		Scheduler nonBlocking = Schedulers.newParallel("blockhound-check", 1);
		try {
			assertThatExceptionOfType(RuntimeException.class).isThrownBy(() -> Mono.fromCallable(() -> {
				LockSupport.parkNanos(1_000);
				return 1;
			}).subscribeOn(nonBlocking).block(Duration.ofSeconds(5)))
				.withRootCauseInstanceOf(BlockingOperationError.class);
		}
		finally {
			nonBlocking.dispose();
		}
	}

}

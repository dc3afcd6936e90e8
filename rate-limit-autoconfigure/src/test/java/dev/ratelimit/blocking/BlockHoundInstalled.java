package dev.ratelimit.blocking;

import reactor.blockhound.BlockHound;

/**
 * Installs BlockHound once per JVM, for every test of this package: a blocking
 * call on a non-blocking thread (a Reactor Netty event loop, Lettuce's, a
 * Reactor parallel worker) throws. Lettuce's synchronous wait for a reply
 * parks only when the reply is not there yet, so a fast Redis would let a
 * blocking call go unseen: every such wait counts as blocking, whether it
 * would park or not.
 */
final class BlockHoundInstalled {

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
	static void ensure() {
	}

}

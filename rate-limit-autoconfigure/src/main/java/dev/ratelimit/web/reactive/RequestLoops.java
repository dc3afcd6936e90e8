package dev.ratelimit.web.reactive;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;

import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;
import reactor.netty.Connection;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;

/**
 * Brings a WebFlux request back to its own event loop once a decision it waited
 * for completed on another thread. A Redis decision's reply arrives on
 * Lettuce's I/O thread, the one thread that reads every reply of the limiter's
 * connection: a request that went on there would run its handler and write its
 * response from it, delaying the replies of every other request, and each
 * write of the response would cross back to the request's event loop anyway.
 * Going back once, before the request goes on, keeps Lettuce's thread for
 * replies and the request's work on the loop of its connection.
 * <p>
 * On Reactor Netty (the WebFlux default) the loop is the request connection's;
 * on another server a request goes on where its decision completed.
 */
final class RequestLoops {

	private static final boolean REACTOR_NETTY = ClassUtils.isPresent("reactor.netty.Connection",
			RequestLoops.class.getClassLoader());

	private static final BiConsumer<Object, Throwable> NOTHING = (result, failure) -> {
	};

	private RequestLoops() {
	}

	/**
	 * Returns a request's decision as a stage that completes on the request's
	 * event loop: the decision itself when it is already complete (decided
	 * inline) or the request has no loop to go back to.
	 * @param <T> the decision's type
	 * @param request the request
	 * @param decision its decision
	 * @return the decision, completing on the request's loop
	 */
	static <T> CompletionStage<T> backOnLoop(ServerHttpRequest request, CompletionStage<T> decision) {
		CompletableFuture<T> future = decision.toCompletableFuture();
		if (future.isDone()) {
			return future;
		}
		Executor loop = loopOf(request);
		return (loop != null) ? future.whenCompleteAsync(NOTHING, loop) : future;
	}

	/**
	 * Returns what runs a task on a request's event loop: at once when called
	 * there, else as a task of that loop, or at once where it is called when the
	 * loop takes no more tasks (a server shutting down must not leave a request
	 * unanswered).
	 * @param request the request
	 * @return the executor, or {@code null} when the request has no event loop
	 */
	static @Nullable Executor loopOf(ServerHttpRequest request) {
		if (!REACTOR_NETTY) {
			return null;
		}
		Object nativeRequest;
		try {
			nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request);
		}
		catch (IllegalStateException ex) {
			// A mock request has none (WebTestClient bound to an application): no loop to go back to.
			return null;
		}
		return NettyLoops.of(nativeRequest);
	}

	/** Reactor Netty's side, loaded only when it is present. */
	private static final class NettyLoops {

		static @Nullable Executor of(Object nativeRequest) {
			if (!(nativeRequest instanceof Connection connection)) {
				return null;
			}
			EventLoop loop = connection.channel().eventLoop();
			return (task) -> {
				if (loop.inEventLoop()) {
					task.run();
					return;
				}
				try {
					loop.execute(task);
				}
				catch (RejectedExecutionException ex) {
					task.run();
				}
			};
		}

	}

}

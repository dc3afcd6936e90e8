package dev.ratelimit.aop;

import java.io.OutputStream;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.http.ResponseEntity;
import org.springframework.util.ClassUtils;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.context.request.async.CallableProcessingInterceptor;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.DeferredResultProcessingInterceptor;
import org.springframework.web.context.request.async.WebAsyncManager;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.context.request.async.WebAsyncUtils;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
import org.springframework.web.util.DisconnectedClientHelper;

/**
 * Finishes a limited call when its work really ends — the one way every kind of
 * limit does it: a concurrency cap releases its permit and a budget settles
 * with the real result then. The work ends at once for a plain result; later
 * for
 * <ul>
 * <li>a {@link CompletionStage} (any {@code CompletableFuture}), when it
 * completes;</li>
 * <li>Spring MVC's {@link Callable}, {@link WebAsyncTask} and
 * {@link DeferredResult}, when the request's asynchronous processing ends: with
 * the result, or with a failure when it fails, times out or the client goes
 * away;</li>
 * <li>{@link ResponseBodyEmitter} and {@link org.springframework.web.servlet.mvc.method.annotation.SseEmitter},
 * when the stream completes, fails or times out (a client that goes away fails
 * it), also inside a {@link ResponseEntity};</li>
 * <li>{@link StreamingResponseBody}, when its body has been written or failed,
 * also inside a {@link ResponseEntity};</li>
 * <li>Reactor's {@link Mono} and {@link Flux} (when Reactor is on the
 * classpath), on completion, error or cancellation; a completed {@code Flux}'s
 * result is its last element. A publisher nobody
 * subscribes to never ends, and holds what it took.</li>
 * </ul>
 * The finish runs exactly once, whatever happens.
 */
final class Completions {

	private static final boolean WEB_MVC = ClassUtils.isPresent(
			"org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter",
			Completions.class.getClassLoader());

	private static final boolean WEB = ClassUtils.isPresent("org.springframework.web.util.DisconnectedClientHelper",
			Completions.class.getClassLoader());

	private static final boolean REACTOR = ClassUtils.isPresent("reactor.core.publisher.Mono",
			Completions.class.getClassLoader());

	private Completions() {
	}

	/**
	 * Arranges for a finish to run once the result's work ends.
	 * @param result the method's result
	 * @param finish what to run, exactly once
	 * @param handler whether the method is the web request's handler, whose
	 * {@link Callable} Spring MVC will run: then its timeout and a client going
	 * away end the work too; another method's {@code Callable} ends when called
	 * @return what to return to the caller: the result, or a wrapper of it that
	 * finishes (a {@link CompletionStage} stage, a wrapped {@link Callable} or body)
	 */
	static @Nullable Object whenDone(@Nullable Object result, Finish finish, boolean handler) {
		Once once = new Once(finish);
		if (result instanceof CompletionStage<?> stage) {
			return stage.whenComplete((value, failure) -> once.finish(value, unwrap(failure), true));
		}
		if (result != null && REACTOR && Reactive.handles(result)) {
			return Reactive.whenDone(result, once);
		}
		if (result != null && WEB_MVC && Mvc.handles(result, handler)) {
			return Mvc.whenDone(result, once);
		}
		if (result instanceof Callable<?> callable) {
			return finishing(callable, once);
		}
		once.finish(result, null, false);
		return result;
	}

	/**
	 * Whether a failure says the work's client went away or its request timed
	 * out, rather than that the work failed: a stream then ran until that point.
	 * @param failure how the work ended
	 * @return whether the client is gone
	 */
	static boolean clientGone(Throwable failure) {
		return failure instanceof WorkAbandonedException
				|| (WEB && DisconnectedClientHelper.isClientDisconnectedException(failure));
	}

	/** Returns the failure of a {@link CompletionStage} or future without its wrapper. */
	static @Nullable Throwable unwrap(@Nullable Throwable failure) {
		Throwable cause = failure;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static Callable<Object> finishing(Callable<?> callable, Once once) {
		return () -> {
			Object value;
			try {
				value = callable.call();
			}
			catch (Throwable ex) {
				once.finish(null, ex, true);
				throw ex;
			}
			once.finish(value, null, true);
			return value;
		};
	}

	/**
	 * What to do when a call's work ends.
	 */
	@FunctionalInterface
	interface Finish {

		/**
		 * The work ended.
		 * @param value the result, {@code null} on failure (the emitter or body of a
		 * stream, the last element of a {@code Flux})
		 * @param failure why it failed, timed out or was abandoned; {@code null} on success
		 * @param later whether the work ended after the method returned, on another
		 * thread or in another dispatch
		 */
		void finished(@Nullable Object value, @Nullable Throwable failure, boolean later);

	}

	/**
	 * Thrown, never to a caller, as the failure of work whose request timed out or
	 * whose client went away before it produced a result.
	 */
	static final class WorkAbandonedException extends RuntimeException {

		private final boolean timedOut;

		WorkAbandonedException(String message) {
			this(message, false);
		}

		WorkAbandonedException(String message, boolean timedOut) {
			super(message, null, false, false);
			this.timedOut = timedOut;
		}

		/** @return whether the work outlived its request's timeout, rather than losing its client */
		boolean timedOut() {
			return this.timedOut;
		}

	}

	/** Runs a finish once. */
	private static final class Once {

		private final Finish finish;

		private final AtomicBoolean done = new AtomicBoolean();

		Once(Finish finish) {
			this.finish = finish;
		}

		void finish(@Nullable Object value, @Nullable Throwable failure, boolean later) {
			if (this.done.compareAndSet(false, true)) {
				this.finish.finished(value, failure, later);
			}
		}

	}

	/** Spring MVC's asynchronous and streaming return values, only touched when spring-webmvc is present. */
	private static final class Mvc {

		static boolean handles(@Nullable Object result, boolean handler) {
			Object body = (result instanceof ResponseEntity<?> entity) ? entity.getBody() : result;
			return body instanceof DeferredResult<?> || body instanceof WebAsyncTask<?>
					|| body instanceof ResponseBodyEmitter || body instanceof StreamingResponseBody
					|| (body instanceof Callable<?> && handler && asyncManager() != null);
		}

		static Object whenDone(Object result, Once once) {
			if (result instanceof ResponseEntity<?> entity) {
				Object body = entity.getBody();
				if (body instanceof StreamingResponseBody streaming) {
					return ResponseEntity.status(entity.getStatusCode())
						.headers(entity.getHeaders())
						.body(finishing(streaming, once));
				}
				whenDoneUnwrapped(Objects.requireNonNull(body, "an asynchronous body"), once);
				return result;
			}
			return whenDoneUnwrapped(result, once);
		}

		private static Object whenDoneUnwrapped(Object result, Once once) {
			if (result instanceof StreamingResponseBody streaming) {
				return finishing(streaming, once);
			}
			WebAsyncManager manager = asyncManager();
			if (result instanceof ResponseBodyEmitter emitter) {
				if (manager != null) {
					// Spring MVC streams it through a DeferredResult, which tells a completed stream
					// (a result) from one whose client went away or that timed out (none).
					manager.registerDeferredResultInterceptor(new Object(), new DeferredInterceptor(once, emitter));
					return emitter;
				}
				// Callbacks add up: the application's own onCompletion and onError still run.
				emitter.onCompletion(() -> once.finish(emitter, null, true));
				emitter.onError((failure) -> once.finish(null, failure, true));
				emitter.onTimeout(() -> once.finish(null, new WorkAbandonedException("The stream timed out", true), true));
				return emitter;
			}
			if (result instanceof DeferredResult<?> deferred) {
				if (manager != null) {
					manager.registerDeferredResultInterceptor(new Object(), new DeferredInterceptor(once, null));
				}
				else {
					// Outside a web request nothing processes it but its own callbacks.
					deferred.onCompletion(() -> finishDeferred(deferred, once));
				}
				return deferred;
			}
			// A Callable or a WebAsyncTask: Spring MVC runs it and tells interceptors how it ended.
			if (manager != null) {
				manager.registerCallableInterceptor(new Object(), new CallableInterceptor(once));
				return result;
			}
			WebAsyncTask<?> task = (WebAsyncTask<?>) result;
			task.onCompletion(() -> once.finish(null, null, true));
			return task;
		}

		private static void finishDeferred(DeferredResult<?> deferred, Once once) {
			Object value = deferred.getResult();
			if (!deferred.hasResult()) {
				once.finish(null, new WorkAbandonedException("The deferred result timed out or was abandoned"), true);
			}
			else if (value instanceof Throwable failure) {
				once.finish(null, failure, true);
			}
			else {
				once.finish(value, null, true);
			}
		}

		private static StreamingResponseBody finishing(StreamingResponseBody body, Once once) {
			return (OutputStream out) -> {
				try {
					body.writeTo(out);
				}
				catch (Throwable ex) {
					// A client that went away fails the write.
					once.finish(null, ex, true);
					throw ex;
				}
				once.finish(body, null, true);
			};
		}

		private static @Nullable WebAsyncManager asyncManager() {
			RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
			return (attributes instanceof ServletRequestAttributes servlet)
					? WebAsyncUtils.getAsyncManager(servlet.getRequest()) : null;
		}

		/** The outcome of a request's asynchronous processing, kept until it completes. */
		private static Object outcome(@Nullable Object concurrentResult) {
			return (concurrentResult != null) ? concurrentResult : NONE;
		}

		private static final Object NONE = new Object();

		/**
		 * Finishes with how the request's asynchronous processing ended.
		 * @param success the value to finish a success with instead of the result
		 * (the stream of an emitter), or {@code null} to use the result
		 */
		private static void finish(Once once, AtomicReference<Object> outcome, @Nullable Object success) {
			Object result = outcome.get();
			if (result == null) {
				once.finish(null, new WorkAbandonedException("The request timed out or its client went away before "
						+ "the work produced a result"), true);
			}
			else if (result instanceof Throwable failure) {
				once.finish(null, failure, true);
			}
			else {
				once.finish((success != null) ? success : (result == NONE) ? null : result, null, true);
			}
		}

		private static final class CallableInterceptor implements CallableProcessingInterceptor {

			private final Once once;

			private final AtomicReference<Object> outcome = new AtomicReference<>();

			CallableInterceptor(Once once) {
				this.once = once;
			}

			@Override
			public <T> void postProcess(NativeWebRequest request, Callable<T> task,
					@Nullable Object concurrentResult) {
				this.outcome.set(outcome(concurrentResult));
			}

			@Override
			public <T> void afterCompletion(NativeWebRequest request, Callable<T> task) {
				finish(this.once, this.outcome, null);
			}

		}

		private static final class DeferredInterceptor implements DeferredResultProcessingInterceptor {

			private final Once once;

			private final @Nullable Object success;

			private final AtomicReference<Object> outcome = new AtomicReference<>();

			DeferredInterceptor(Once once, @Nullable Object success) {
				this.once = once;
				this.success = success;
			}

			@Override
			public <T> void postProcess(NativeWebRequest request, DeferredResult<T> deferredResult,
					@Nullable Object concurrentResult) {
				this.outcome.set(outcome(concurrentResult));
			}

			@Override
			public <T> void afterCompletion(NativeWebRequest request, DeferredResult<T> deferredResult) {
				finish(this.once, this.outcome, this.success);
			}

		}

	}

	/** Reactor's publishers, only touched when Reactor is present. */
	private static final class Reactive {

		static boolean handles(@Nullable Object result) {
			return result instanceof Mono<?> || result instanceof Flux<?>;
		}

		static Object whenDone(Object result, Once once) {
			if (result instanceof Mono<?> mono) {
				return mono.doOnSuccess((value) -> once.finish(value, null, true))
					.doOnError((failure) -> once.finish(null, failure, true))
					.doOnCancel(() -> once.finish(null, new WorkAbandonedException("The subscriber cancelled"), true));
			}
			// The last element is the result a completed stream is settled with: often its usage.
			AtomicReference<Object> last = new AtomicReference<>();
			Flux<?> flux = (Flux<?>) result;
			return flux.doOnNext(last::set)
				.doOnComplete(() -> once.finish(last.get(), null, true))
				.doOnError((failure) -> once.finish(null, failure, true))
				.doOnCancel(() -> once.finish(null, new WorkAbandonedException("The subscriber cancelled"), true));
		}

	}

}

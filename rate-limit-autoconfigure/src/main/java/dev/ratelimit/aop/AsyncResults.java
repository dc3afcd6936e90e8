package dev.ratelimit.aop;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;

import org.springframework.util.ClassUtils;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;

/**
 * Runs an action when a method's work is really done: at once for a plain
 * result, or when an asynchronous result completes — a
 * {@link CompletionStage}, or Spring MVC's {@link Callable},
 * {@link DeferredResult} and {@link WebAsyncTask}.
 */
final class AsyncResults {

	private static final boolean WEB_PRESENT = ClassUtils.isPresent(
			"org.springframework.web.context.request.async.DeferredResult", AsyncResults.class.getClassLoader());

	private AsyncResults() {
	}

	/**
	 * Arranges for {@code done} to run when the result's work completes.
	 * @param result the method's result
	 * @param done the action, run exactly once
	 * @return the result to return to the caller: the same object, or a
	 * {@link Callable} wrapped to run the action after it
	 */
	static Object whenDone(Object result, Runnable done) {
		if (result instanceof CompletionStage<?> stage) {
			return stage.whenComplete((value, error) -> done.run());
		}
		if (result instanceof Callable<?> callable) {
			return (Callable<Object>) () -> {
				try {
					return callable.call();
				}
				finally {
					done.run();
				}
			};
		}
		if (WEB_PRESENT && Web.whenDone(result, done)) {
			return result;
		}
		done.run();
		return result;
	}

	/** Spring MVC's async types, only touched when spring-web is present. */
	private static final class Web {

		static boolean whenDone(Object result, Runnable done) {
			if (result instanceof DeferredResult<?> deferred) {
				// onCompletion also runs after a timeout or an error.
				deferred.onCompletion(done);
				return true;
			}
			if (result instanceof WebAsyncTask<?> task) {
				task.onCompletion(done);
				return true;
			}
			return false;
		}

	}

}

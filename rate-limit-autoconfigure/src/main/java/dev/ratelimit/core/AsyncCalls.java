package dev.ratelimit.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * The one way the three kinds of limit (rate limits, budgets, concurrency
 * caps) turn a synchronous store call into a stage when the store has no
 * asynchronous call of its own: inline when the call cannot block (a store in
 * memory), else on the given executor, so that the caller's thread never
 * waits. And how the failure of a stage is seen again as what was thrown.
 */
public final class AsyncCalls {

	private AsyncCalls() {
	}

	/**
	 * Runs a synchronous call as a stage.
	 * @param blocks whether the call may block the calling thread
	 * @param blocking runs the call when it may block
	 * @param call the call
	 * @param <T> its result
	 * @return a completed stage when the call cannot block (its failure as a
	 * failed stage), else one completed by the executor's thread
	 */
	public static <T> CompletionStage<T> call(boolean blocks, Executor blocking, Supplier<T> call) {
		if (blocks) {
			return CompletableFuture.supplyAsync(call, blocking);
		}
		try {
			return CompletableFuture.completedFuture(call.get());
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Returns a stage that runs an asynchronous call, with what the call throws
	 * before it returns a stage seen as the stage's failure.
	 * @param call the call
	 * @param <T> its result
	 * @return its stage
	 */
	public static <T> CompletionStage<T> started(Supplier<CompletionStage<T>> call) {
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Returns what a stage failed with, as thrown by the call it stands for:
	 * without the {@link CompletionException} a dependent stage wraps it in.
	 * An {@link Error} is thrown again: no failure mode applies to it.
	 * @param failure the stage's failure
	 * @return the exception
	 */
	public static RuntimeException cause(Throwable failure) {
		Throwable cause = failure;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		if (cause instanceof Error error) {
			throw error;
		}
		return (cause instanceof RuntimeException runtime) ? runtime : new CompletionException(cause);
	}

}

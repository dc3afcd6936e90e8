package dev.ratelimit.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Where the asynchronous decisions of a caller that must never block (a
 * reactive event loop) do what they cannot do inline: a store call that can
 * only wait on I/O synchronously runs through {@link #execute} on a thread that
 * may block, and a call in wait mode waits through {@link #delay}, on a timer,
 * holding no thread. Decisions a store takes asynchronously (Redis, through
 * Lettuce) or in memory use neither. The reactive web layer supplies Reactor's
 * bounded elastic scheduler and its timer.
 */
public interface DecisionThreads extends Executor {

	/**
	 * Runs a task that may block, on a thread where that is allowed.
	 * @param task the task
	 */
	@Override
	void execute(Runnable task);

	/**
	 * Returns a stage that completes once the given time has passed, without
	 * holding a thread meanwhile.
	 * @param micros the time to wait, in microseconds
	 * @return the stage
	 */
	CompletionStage<Void> delay(long micros);

	/**
	 * Returns threads for a caller that may block itself: a call that can only
	 * block runs at once on the calling thread, and a wait is a timer of the
	 * JDK's ({@link CompletableFuture#delayedExecutor}).
	 * @return the threads
	 */
	static DecisionThreads inline() {
		return new DecisionThreads() {

			@Override
			public void execute(Runnable task) {
				task.run();
			}

			@Override
			public CompletionStage<Void> delay(long micros) {
				return CompletableFuture.runAsync(() -> {
				}, CompletableFuture.delayedExecutor(micros, TimeUnit.MICROSECONDS, Runnable::run));
			}

		};
	}

}

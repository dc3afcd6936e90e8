package dev.ratelimit.aop;

import org.jspecify.annotations.Nullable;

/**
 * Tells a budgeted call whether limited work nested inside it ran. A budgeted
 * call opens a scope around its method; every limited method whose limits all
 * admitted it marks the scopes open on its thread before its body runs. When
 * the budgeted call then ends with one of the limiter's own refusals, the scope
 * says whether that refusal came before any limited work ran (nothing was
 * spent: the reservation is released) or after some did (an agent loop whose
 * third provider call is refused has paid for two: the budget's usual rules
 * apply).
 * <p>
 * Scopes are per thread: work that a call hands to another thread (a
 * {@code CompletableFuture.supplyAsync}) cannot mark them, so an asynchronous
 * result is always treated as work that may have run.
 */
public final class WorkScope implements AutoCloseable {

	private static final ThreadLocal<WorkScope> CURRENT = new ThreadLocal<>();

	private final @Nullable WorkScope parent;

	private boolean workRan;

	private WorkScope(@Nullable WorkScope parent) {
		this.parent = parent;
	}

	/**
	 * Marks every scope open on this thread: limited work is about to run (a
	 * limited method's body, or a request sent to a provider by its client).
	 */
	public static void workStarts() {
		for (WorkScope scope = CURRENT.get(); scope != null; scope = scope.parent) {
			scope.workRan = true;
		}
	}

	/**
	 * Opens a scope on this thread, to close when the call ends.
	 * @return the scope
	 */
	static WorkScope open() {
		WorkScope scope = new WorkScope(CURRENT.get());
		CURRENT.set(scope);
		return scope;
	}

	/** @return whether limited work ran inside this scope */
	boolean workRan() {
		return this.workRan;
	}

	@Override
	public void close() {
		if (this.parent != null) {
			CURRENT.set(this.parent);
		}
		else {
			CURRENT.remove();
		}
	}

}

package dev.ratelimit.key;

import java.lang.reflect.Method;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.Visibility;

/**
 * Connects limited method calls to the web request they run in, if any: key
 * expressions read the request, and outcomes become response headers, for the
 * limits whose {@link Visibility} lets the caller see them.
 */
public interface RequestBinding {

	/** Binding for applications without a web request: no request, no headers. */
	RequestBinding NONE = new RequestBinding() {

		@Override
		public @Nullable KeyRequest current() {
			return null;
		}

		@Override
		public void record(RateLimitOutcome outcome) {
		}

	};

	/**
	 * Returns the request the current thread serves.
	 * @return the request, or {@code null} outside a web request
	 */
	@Nullable KeyRequest current();

	/**
	 * Records an outcome for the current request's response headers; does nothing
	 * outside a web request.
	 * @param outcome the outcome
	 */
	void record(RateLimitOutcome outcome);

	/**
	 * Registers a limit an annotated method applies to the current request, so
	 * that its response names the limit (in header fields and refusals) only if
	 * its visibility allows: {@link Visibility#AUTO} allows it when the method is
	 * the request's handler itself and the key is the caller's. Called before the
	 * limit decides; does nothing outside a web request.
	 * @param policy the limit's name
	 * @param visibility its visibility
	 * @param keyExpression its key expression in force
	 * @param method the annotated method applying it
	 */
	default void applying(String policy, Visibility visibility, String keyExpression, Method method) {
	}

	/**
	 * Returns whether a method is the current web request's handler itself,
	 * rather than a service the handler calls.
	 * @param method the method
	 * @return whether it handles the current request; {@code false} outside a web request
	 */
	default boolean isHandler(Method method) {
		return false;
	}

	/**
	 * Records a budget's state for the current request's response headers; does
	 * nothing outside a web request.
	 * @param policy the budget
	 * @param decision its state
	 */
	default void recordBudget(BudgetPolicy policy, BudgetDecision decision) {
	}

	/**
	 * Returns whether a limited call of a method runs through {@link #call}
	 * rather than at once: never for a servlet request (this default), which is
	 * the calling thread's.
	 * @param method the annotated method
	 * @return whether to run its limited calls through {@link #call}
	 */
	default boolean defers(Method method) {
		return false;
	}

	/**
	 * Runs a limited call of an annotated method within the request it serves:
	 * its decisions, the method itself and what it returns; called only when
	 * {@link #defers} says so (this default runs it now, with the decisions'
	 * blocking calls inline and waits on a timer, and waits for it). A reactive
	 * binding defers a call whose method returns a reactive type into the
	 * pipeline that subscribes to it, where the request is known, and decides
	 * without blocking the thread that subscribes: the decisions' stages are
	 * asynchronous, what can only block runs on a thread that may, a wait is a
	 * timer, and each step after a stage runs with the request bound again.
	 * @param method the annotated method, whose return type says how to run it
	 * @param call decides, calls the method and returns its result
	 * @return the method's result, or one that runs the call when subscribed to
	 * @throws Throwable what the call throws, when it runs now
	 */
	default Object call(Method method, LimitedCall call) throws Throwable {
		try {
			return call.run(DecisionThreads.inline(), Runnable::run).toCompletableFuture().join();
		}
		catch (CompletionException ex) {
			throw (ex.getCause() != null) ? ex.getCause() : ex;
		}
	}

	/**
	 * Returns a limited call's result as the call's settling is to see its end:
	 * this default returns it as it is. A reactive binding has a {@code Mono} or
	 * {@code Flux} whose settling may block end on a thread that may block, so
	 * that the release, settle or give-back runs there, in the pipeline, before
	 * the request's answer goes out.
	 * @param result the method's result
	 * @param mayBlock whether settling may block
	 * @return the result to settle on and return
	 */
	default @Nullable Object ending(@Nullable Object result, boolean mayBlock) {
		return result;
	}

	/**
	 * Returns what runs the end of a limited call (its settle, its releases, its
	 * give-backs) with the call's request in reach, on whichever thread ends the
	 * call: the value of a {@code Mono} comes on another thread than the one the
	 * call was made on, and a settled budget's {@code Budget-Remaining} must still
	 * reach its response before the value is written. Asked while the call is
	 * made. This default has none: a servlet request ends on the thread that
	 * serves it, so each step runs at once, as it comes.
	 * @return the executor, which runs each step on the calling thread with the
	 * request bound, or {@code null} when there is nothing to bind
	 */
	default @Nullable Executor endingInRequest() {
		return null;
	}

	/**
	 * Runs what a limited call does once it is done: a permit's release, a
	 * budget's settle, the give-backs of limits counted by outcome. This default
	 * runs it at once, on the thread that saw the end. A reactive binding runs it
	 * elsewhere when it may block and that thread must not (a request cancelled
	 * on an event loop).
	 * @param mayBlock whether it may block
	 * @param finish what to run
	 */
	default void finishing(boolean mayBlock, Runnable finish) {
		finish.run();
	}

	/**
	 * Says when a method is called with no request in reach of its limits'
	 * keys: a key that reads the request (a header, the client address, the
	 * principal) then comes out missing on every call. For the start-up report.
	 * @param method the limited method
	 * @param beanType the class of its bean
	 * @return why no request is in reach of the method's calls, or {@code null} when one is
	 */
	default @Nullable String requestOutOfReach(Method method, Class<?> beanType) {
		return null;
	}

	/**
	 * A limited call of an annotated method, deferred (see {@link #call}): its
	 * decisions, the method, and its result.
	 */
	@FunctionalInterface
	interface LimitedCall {

		/**
		 * Decides, calls the method and returns its result, without making the
		 * calling thread wait; called with the request bound to the thread.
		 * @param threads runs the decisions' calls that can only block, and their waits
		 * @param inRequest runs a step after a decision's stage, at once on the
		 * thread it is given to, with the call's request bound to that thread
		 * @return the method's result, once decided; a refusal, or what the
		 * method throws, fails the stage
		 */
		CompletionStage<Object> run(DecisionThreads threads, Executor inRequest);

	}

}

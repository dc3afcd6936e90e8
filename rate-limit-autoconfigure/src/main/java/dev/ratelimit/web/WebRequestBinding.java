package dev.ratelimit.web;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.Visibility;
import dev.ratelimit.key.KeyRequest;
import dev.ratelimit.key.RequestBinding;

/**
 * What the annotations' limits tell a web request, written once for every
 * stack: which limits its response may name ({@link #applying}), their
 * decisions as header fields ({@link #record}), the budgets' field
 * ({@link #recordBudget}), and whether a limited method is the request's
 * handler ({@link #isHandler}). A stack supplies only how to reach its request
 * of the call running now, its attributes, its handler and its response: a
 * servlet binding from Spring's request holder, a reactive one from the
 * exchange bound to the call.
 * <p>
 * One rule for both: a limit hidden wherever it applies is never looked for in
 * the request; decisions are always kept with the request's disclosures, and
 * their fields written only while the response has not begun; a request that
 * disclosed nothing gets no fields.
 *
 * @param <X> the stack's request of a call
 * @param <R> the stack's response
 */
public abstract class WebRequestBinding<X, R> implements RequestBinding {

	private final WebContract contract;

	private final HeaderWriter<R> writer;

	/**
	 * Creates a binding.
	 * @param contract the web contract it writes and reads the caller by
	 * @param writer writes the stack's response fields
	 */
	protected WebRequestBinding(WebContract contract, HeaderWriter<R> writer) {
		this.contract = contract;
		this.writer = writer;
	}

	/**
	 * Returns the web contract.
	 * @return the contract
	 */
	protected final WebContract contract() {
		return this.contract;
	}

	/**
	 * Returns the request of the call running on this thread.
	 * @return the request, or {@code null} outside a request
	 */
	protected abstract @Nullable X request();

	/**
	 * Returns a request's disclosures: its attribute {@link Disclosures#ATTRIBUTE}.
	 * @param request the request
	 * @return its disclosures, or {@code null} when it has none
	 */
	protected abstract @Nullable Disclosures disclosures(X request);

	/**
	 * Attaches disclosures to a request that had none, as its attribute
	 * {@link Disclosures#ATTRIBUTE}.
	 * @param request the request
	 * @param disclosures the disclosures
	 */
	protected abstract void attach(X request, Disclosures disclosures);

	/**
	 * Returns the handler the request was mapped to.
	 * @param request the request
	 * @return the handler (a {@code HandlerMethod}), or {@code null}
	 */
	protected abstract @Nullable Object handler(X request);

	/**
	 * Returns a request's response.
	 * @param request the request
	 * @return the response, or {@code null} when there is none to write to
	 */
	protected abstract @Nullable R response(X request);

	/**
	 * Returns what key expressions read of a request.
	 * @param request the request
	 * @return the request as key expressions see it
	 */
	protected abstract KeyRequest keyRequest(X request);

	@Override
	public final @Nullable KeyRequest current() {
		X request = request();
		return (request != null) ? keyRequest(request) : null;
	}

	@Override
	public final void record(RateLimitOutcome outcome) {
		X request = request();
		R response = (request != null) ? response(request) : null;
		if (request != null && response != null) {
			Disclosures disclosures = disclosures(request);
			if (disclosures != null) {
				this.contract.headers().record(disclosures, response, this.writer, outcome);
			}
		}
	}

	@Override
	public final void applying(String policy, Visibility visibility, String keyExpression, Method method) {
		if (!visibility.disclosed(keyExpression, true)) {
			// Hidden wherever it applies: no need to look up the request's handler.
			return;
		}
		X request = request();
		if (request != null && visibility.disclosed(keyExpression, isHandler(request, method))) {
			Disclosures disclosures = disclosures(request);
			if (disclosures == null) {
				attach(request, Disclosures.create(policy));
			}
			else {
				disclosures.add(policy);
			}
		}
	}

	@Override
	public final boolean isHandler(Method method) {
		X request = request();
		return request != null && isHandler(request, method);
	}

	/**
	 * Returns whether a method is the handler of the request itself, rather than
	 * a service the handler calls.
	 */
	private boolean isHandler(X request, Method method) {
		return HandlerMatch.isHandler(handler(request), method);
	}

	@Override
	public final void recordBudget(BudgetPolicy policy, BudgetDecision decision) {
		X request = request();
		R response = (request != null) ? response(request) : null;
		if (request != null && response != null) {
			Disclosures disclosures = disclosures(request);
			if (disclosures != null) {
				this.contract.budgetHeaders().record(disclosures, response, this.writer, policy, decision);
			}
		}
	}

}

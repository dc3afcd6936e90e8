package dev.ratelimit.web;

import java.lang.reflect.Method;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.HandlerMapping;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.Visibility;
import dev.ratelimit.key.KeyRequest;
import dev.ratelimit.key.RequestBinding;

/**
 * {@link RequestBinding} for servlet applications, reading the current request
 * from Spring's {@link RequestContextHolder}.
 */
public final class ServletRequestBinding implements RequestBinding {

	private final WebContract contract;

	/**
	 * Creates a binding.
	 * @param contract the web contract it writes and reads the caller by
	 */
	public ServletRequestBinding(WebContract contract) {
		this.contract = contract;
	}

	@Override
	public KeyRequest current() {
		ServletRequestAttributes attributes = attributes();
		return (attributes != null) ? new ServletKeyRequest(attributes.getRequest(), this.contract.ipResolver()) : null;
	}

	@Override
	public void record(RateLimitOutcome outcome) {
		ServletRequestAttributes attributes = attributes();
		if (attributes != null && attributes.getResponse() != null) {
			Disclosures disclosures = Disclosures.of(attributes.getRequest());
			if (disclosures != null) {
				// The decisions are recorded all the same; the fields only while the response can take them.
				this.contract.headers().record(disclosures, ServletHeaders.whileUncommitted(attributes.getResponse()), outcome);
			}
		}
	}

	@Override
	public void applying(String policy, Visibility visibility, String keyExpression, Method method) {
		if (!visibility.disclosed(keyExpression, true)) {
			// Hidden wherever it applies: no need to look up the request's handler.
			return;
		}
		ServletRequestAttributes attributes = attributes();
		if (attributes != null
				&& visibility.disclosed(keyExpression, isHandler(attributes.getRequest(), method))) {
			Disclosures.add(attributes.getRequest(), policy);
		}
	}

	@Override
	public boolean isHandler(Method method) {
		ServletRequestAttributes attributes = attributes();
		return attributes != null && isHandler(attributes.getRequest(), method);
	}

	/**
	 * Returns whether a method is the handler of the request itself, rather than
	 * a service the handler calls.
	 */
	private static boolean isHandler(jakarta.servlet.http.HttpServletRequest request, Method method) {
		return HandlerMatch.isHandler(request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE), method);
	}

	@Override
	public void recordBudget(BudgetPolicy policy, BudgetDecision decision) {
		ServletRequestAttributes attributes = attributes();
		if (attributes != null && attributes.getResponse() != null) {
			Disclosures disclosures = Disclosures.of(attributes.getRequest());
			if (disclosures != null) {
				this.contract.budgetHeaders().record(disclosures, ServletHeaders.whileUncommitted(attributes.getResponse()), policy,
						decision);
			}
		}
	}

	private static ServletRequestAttributes attributes() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes instanceof ServletRequestAttributes servlet) ? servlet : null;
	}

}

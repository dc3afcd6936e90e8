package dev.ratelimit.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

import dev.ratelimit.core.RateLimitException;

/**
 * Turns limiter exceptions thrown inside Spring MVC (by the aspect on a
 * controller, or by a limited service it calls) into the HTTP contract's
 * problem responses. Runs before the application's own exception handlers, so
 * a catch-all {@code @ExceptionHandler(Exception.class)} cannot turn a 429 into
 * a 500.
 */
public final class RateLimitExceptionResolver implements HandlerExceptionResolver, Ordered {

	private final ProblemResponses problems;

	/**
	 * Creates a resolver.
	 * @param problems writes the problem responses
	 */
	public RateLimitExceptionResolver(ProblemResponses problems) {
		this.problems = problems;
	}

	@Override
	public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
			Exception ex) {
		if (!(ex instanceof RateLimitException limitException) || response.isCommitted()) {
			return null;
		}
		try {
			this.problems.write(request, response, limitException);
			return new ModelAndView();
		}
		catch (IOException writeFailure) {
			return null;
		}
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}

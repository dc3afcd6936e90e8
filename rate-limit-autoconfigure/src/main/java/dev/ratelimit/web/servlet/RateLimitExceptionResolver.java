package dev.ratelimit.web.servlet;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

import dev.ratelimit.core.RateLimitException;

/**
 * Answers limiter exceptions thrown inside Spring MVC (by an aspect on a
 * controller, or by a limited service it calls) through the application's
 * {@link RejectionHandler}. Runs before the application's own exception
 * handlers, so a catch-all {@code @ExceptionHandler(Exception.class)} cannot
 * turn a 429 into a 500; an application that wants its own
 * {@code @ExceptionHandler}s to answer instead turns it off with
 * {@code rate-limit.web.exception-resolver.enabled=false}.
 */
public final class RateLimitExceptionResolver implements HandlerExceptionResolver, Ordered {

	private final Rejections rejections;

	/**
	 * Creates a resolver.
	 * @param rejections answers refusals
	 */
	public RateLimitExceptionResolver(Rejections rejections) {
		this.rejections = rejections;
	}

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		if (!(ex instanceof RateLimitException limitException) || response.isCommitted()) {
			return null;
		}
		try {
			this.rejections.send(request, response, limitException);
			// Empty: the answer is written (or, for a browser, left to the container's error page).
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

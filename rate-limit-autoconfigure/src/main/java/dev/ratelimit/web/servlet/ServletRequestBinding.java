package dev.ratelimit.web.servlet;

import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.HandlerMapping;

import dev.ratelimit.key.KeyRequest;
import dev.ratelimit.key.RequestBinding;
import dev.ratelimit.web.Disclosures;
import dev.ratelimit.web.WebContract;
import dev.ratelimit.web.WebRequestBinding;

/**
 * {@link RequestBinding} for servlet applications, reading the current request
 * from Spring's {@link RequestContextHolder}; what it records and discloses is
 * {@link WebRequestBinding}'s.
 */
public final class ServletRequestBinding extends WebRequestBinding<ServletRequestAttributes, HttpServletResponse> {

	/**
	 * Creates a binding.
	 * @param contract the web contract it writes and reads the caller by
	 */
	public ServletRequestBinding(WebContract contract) {
		super(contract, ServletHeaders.WRITER);
	}

	@Override
	protected @Nullable ServletRequestAttributes request() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes instanceof ServletRequestAttributes servlet) ? servlet : null;
	}

	@Override
	protected @Nullable Disclosures disclosures(ServletRequestAttributes request) {
		return ServletHeaders.disclosures(request.getRequest());
	}

	@Override
	protected void attach(ServletRequestAttributes request, Disclosures disclosures) {
		ServletHeaders.attach(request.getRequest(), disclosures);
	}

	@Override
	protected @Nullable Object handler(ServletRequestAttributes request) {
		return request.getRequest().getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
	}

	@Override
	protected @Nullable HttpServletResponse response(ServletRequestAttributes request) {
		return request.getResponse();
	}

	@Override
	protected KeyRequest keyRequest(ServletRequestAttributes request) {
		return new ServletExchange(request.getRequest(), null, contract().ipResolver(), null);
	}

}

package dev.ratelimit.web;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import dev.ratelimit.core.ClientIpResolver;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.key.KeyRequest;
import dev.ratelimit.key.RequestBinding;

/**
 * {@link RequestBinding} for servlet applications, reading the current request
 * from Spring's {@link RequestContextHolder}.
 */
public final class ServletRequestBinding implements RequestBinding {

	private final ClientIpResolver ipResolver;

	private final RateLimitHeaders headers;

	/**
	 * Creates a binding.
	 * @param ipResolver resolves client addresses
	 * @param headers writes the response headers
	 */
	public ServletRequestBinding(ClientIpResolver ipResolver, RateLimitHeaders headers) {
		this.ipResolver = ipResolver;
		this.headers = headers;
	}

	@Override
	public KeyRequest current() {
		ServletRequestAttributes attributes = attributes();
		return (attributes != null) ? new ServletKeyRequest(attributes.getRequest(), this.ipResolver) : null;
	}

	@Override
	public void record(RateLimitOutcome outcome) {
		ServletRequestAttributes attributes = attributes();
		if (attributes != null && attributes.getResponse() != null) {
			this.headers.record(attributes.getRequest(), attributes.getResponse(), outcome);
		}
	}

	private static ServletRequestAttributes attributes() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes instanceof ServletRequestAttributes servlet) ? servlet : null;
	}

}

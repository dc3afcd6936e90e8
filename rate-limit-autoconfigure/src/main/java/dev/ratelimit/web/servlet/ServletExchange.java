package dev.ratelimit.web.servlet;

import java.security.Principal;
import java.util.Collections;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;

import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.web.Disclosures;
import dev.ratelimit.web.WebExchange;

/**
 * A servlet request and its response as the shared web contract sees them
 * ({@link WebExchange}). The path within the application is read as the raw
 * string when the parser would not change it, and parsed only when a route
 * rule's pattern needs that: each at most once per request.
 */
public final class ServletExchange extends WebExchange {

	private final HttpServletRequest request;

	private final @Nullable HttpServletResponse response;

	private boolean plainPathRead;

	private @Nullable String plainPath;

	private @Nullable PathContainer path;

	/**
	 * Creates the exchange.
	 * @param request the request
	 * @param response its response, or {@code null} where only the request is read (a key expression's)
	 * @param ipResolver resolves the client address
	 * @param disclosures the request's disclosures when the caller holds them already, else {@code null}
	 */
	public ServletExchange(HttpServletRequest request, @Nullable HttpServletResponse response, ClientIpResolver ipResolver,
			@Nullable Disclosures disclosures) {
		super(ipResolver, disclosures);
		this.request = request;
		this.response = response;
	}

	@Override
	public String method() {
		return this.request.getMethod();
	}

	@Override
	public @Nullable String plainPath() {
		if (!this.plainPathRead) {
			this.plainPath = plainPathWithinApplication(this.request);
			this.plainPathRead = true;
		}
		return this.plainPath;
	}

	@Override
	public PathContainer path() {
		PathContainer path = this.path;
		if (path == null) {
			path = RequestPath.parse(this.request.getRequestURI(), this.request.getContextPath())
				.pathWithinApplication();
			this.path = path;
		}
		return path;
	}

	/** @return whether the path was parsed (for tests: the string comparison avoids it) */
	public boolean isParsed() {
		return this.path != null;
	}

	@Override
	protected @Nullable String firstHeader(String name) {
		return this.request.getHeader(name);
	}

	@Override
	protected List<String> headerValues(String name) {
		return Collections.list(this.request.getHeaders(name));
	}

	@Override
	protected @Nullable String remoteAddress() {
		return this.request.getRemoteAddr();
	}

	@Override
	public boolean isUserInRole(String role) {
		return this.request.isUserInRole(role);
	}

	@Override
	public @Nullable String principalName() {
		Principal principal = this.request.getUserPrincipal();
		return (principal != null) ? principal.getName() : null;
	}

	@Override
	public Object nativeRequest() {
		return this.request;
	}

	@Override
	protected @Nullable Object attribute(String name) {
		return this.request.getAttribute(name);
	}

	@Override
	protected void setAttribute(String name, Object value) {
		this.request.setAttribute(name, value);
	}

	@Override
	protected void setHeader(String name, String value) {
		if (this.response != null) {
			this.response.setHeader(name, value);
		}
	}

	@Override
	protected boolean isCommitted() {
		return this.response == null || this.response.isCommitted();
	}

	@Override
	public int status() {
		return (this.response != null) ? this.response.getStatus() : -1;
	}

	private static @Nullable String plainPathWithinApplication(HttpServletRequest request) {
		String uri = request.getRequestURI();
		String context = request.getContextPath();
		if (uri == null || !isPlain(uri)) {
			return null;
		}
		if (context == null || context.isEmpty()) {
			return uri;
		}
		// A context path the parser would check and strip segment by segment: leave it the parser.
		return (uri.startsWith(context) && (uri.length() == context.length() || uri.charAt(context.length()) == '/'))
				? uri.substring(context.length()) : null;
	}

}

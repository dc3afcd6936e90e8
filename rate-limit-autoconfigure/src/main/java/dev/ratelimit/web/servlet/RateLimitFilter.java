package dev.ratelimit.web.servlet;

import java.io.IOException;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.jspecify.annotations.Nullable;
import org.springframework.web.filter.GenericFilterBean;
import org.springframework.web.util.WebUtils;

import dev.ratelimit.concurrency.ConcurrencyLimiter;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.web.Disclosures;
import dev.ratelimit.web.MatchedLimits;
import dev.ratelimit.web.RateLimitHeaders;
import dev.ratelimit.web.RouteCall;
import dev.ratelimit.web.RouteLimits;
import dev.ratelimit.web.RouteRule;
import dev.ratelimit.web.RouteRules;

/**
 * Enforces the route rules of {@code rate-limit.routes} before the request
 * body is read or a controller runs. An allowed request continues with the
 * rate-limit header fields set; a denied one is answered here, through the
 * application's {@link RejectionHandler}, without reaching Spring MVC.
 * <p>
 * A rule with {@code count-on} counts requests by their outcome: the units are
 * taken before the request runs, so a caller over the limit is refused before
 * the application sees it, and given back once the response is complete when
 * its status is not listed. What a rule decides and answers is written once for
 * every stack ({@link RouteCall}); this filter adapts a servlet request to it.
 * <p>
 * Each request is filtered once, as by Spring's {@code OncePerRequestFilter}:
 * not again in a forward or include of a request this filter is handling, nor
 * in an asynchronous or an error dispatch. Register it for every dispatcher
 * type, as Spring Boot does for a {@code OncePerRequestFilter}. Unlike that
 * class, it marks a request it handles in the one request attribute that also
 * holds the request's disclosed limits and decisions, which it sets once and
 * never removes: a limited request writes the container's attribute map once,
 * not three times (its marker, its removal, the disclosed limits).
 */
public class RateLimitFilter extends GenericFilterBean {

	private final RouteRules rules;

	/** Numbers the instances, for {@link #ownMarker}. */
	private static final AtomicInteger instances = new AtomicInteger();

	/** This instance's request attribute when another instance handles the request already; unique per instance. */
	private final String ownMarker = RateLimitFilter.class.getName() + "." + instances.incrementAndGet() + ".FILTERED";

	private final RouteLimits limits;

	private final ClientIpResolver ipResolver;

	private final Rejections rejections;

	/**
	 * Creates the filter, for route rules without concurrency caps.
	 * @param routes the route rules, in configuration order
	 * @param limiter decides
	 * @param expressions evaluates keys
	 * @param ipResolver resolves client addresses
	 * @param headers writes the header fields
	 * @param rejections answers refusals
	 */
	public RateLimitFilter(List<RouteRule> routes, RateLimiter limiter, KeyExpressions expressions,
			ClientIpResolver ipResolver, RateLimitHeaders headers, Rejections rejections) {
		this(routes, limiter, null, expressions, ipResolver, headers, rejections);
	}

	/**
	 * Creates the filter.
	 * @param routes the route rules, in configuration order
	 * @param limiter decides
	 * @param concurrency hands out the permits of the rules' concurrency caps; {@code null} when no rule has one
	 * @param expressions evaluates keys
	 * @param ipResolver resolves client addresses
	 * @param headers writes the header fields
	 * @param rejections answers refusals
	 */
	public RateLimitFilter(List<RouteRule> routes, RateLimiter limiter, @Nullable ConcurrencyLimiter concurrency,
			KeyExpressions expressions, ClientIpResolver ipResolver, RateLimitHeaders headers,
			Rejections rejections) {
		this(routes, new RouteLimits(limiter, concurrency, expressions, headers), ipResolver, rejections);
	}

	/**
	 * Creates the filter.
	 * @param routes the route rules, in configuration order
	 * @param limits decides and answers what a rule applies to a request
	 * @param ipResolver resolves client addresses
	 * @param rejections answers refusals
	 * @throws IllegalArgumentException when a rule has a concurrency cap the limits have no limiter for
	 */
	public RateLimitFilter(List<RouteRule> routes, RouteLimits limits, ClientIpResolver ipResolver,
			Rejections rejections) {
		this(new RouteRules(routes), limits, ipResolver, rejections);
	}

	/**
	 * Creates the filter.
	 * @param rules the route rules, with the paths their caps leave out
	 * @param limits decides and answers what a rule applies to a request
	 * @param ipResolver resolves client addresses
	 * @param rejections answers refusals
	 * @throws IllegalArgumentException when a rule has a concurrency cap the limits have no limiter for
	 */
	public RateLimitFilter(RouteRules rules, RouteLimits limits, ClientIpResolver ipResolver, Rejections rejections) {
		limits.check(rules.routes());
		this.rules = rules;
		this.limits = limits;
		this.ipResolver = ipResolver;
		this.rejections = rejections;
	}

	/**
	 * Returns the dispatcher types to register the filter for: all of them, as
	 * Spring Boot registers a {@code OncePerRequestFilter}; the filter itself
	 * passes on asynchronous and error dispatches and nested ones.
	 * @return every dispatcher type
	 */
	public static EnumSet<DispatcherType> dispatcherTypes() {
		return EnumSet.allOf(DispatcherType.class);
	}

	/**
	 * Returns the route rules, in configuration order.
	 * @return the rules
	 */
	public List<RouteRule> getRoutes() {
		return this.rules.routes();
	}

	@Override
	public final void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (!(request instanceof HttpServletRequest httpRequest)
				|| !(response instanceof HttpServletResponse httpResponse)) {
			throw new ServletException("RateLimitFilter only supports HTTP requests");
		}
		if (skipDispatch(httpRequest) || shouldNotFilter(httpRequest)) {
			chain.doFilter(request, response);
			return;
		}
		Disclosures state = ServletHeaders.attachedDisclosures(httpRequest);
		Object outer = state.filteredBy();
		if (outer == this) {
			// A forward or include of a request this filter is handling: it was decided already.
			chain.doFilter(request, response);
			return;
		}
		if (outer != null) {
			// Another instance is handling it: this one keeps a marker of its own, as OncePerRequestFilter does.
			filterWithOwnMarker(httpRequest, httpResponse, chain);
			return;
		}
		state.filteredBy(this);
		try {
			doFilterInternal(httpRequest, httpResponse, chain);
		}
		finally {
			state.filteredBy(null);
		}
	}

	private void filterWithOwnMarker(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		String marker = this.ownMarker;
		if (request.getAttribute(marker) != null) {
			chain.doFilter(request, response);
			return;
		}
		request.setAttribute(marker, Boolean.TRUE);
		try {
			doFilterInternal(request, response, chain);
		}
		finally {
			request.removeAttribute(marker);
		}
	}

	/**
	 * An asynchronous dispatch continues a request decided on its first
	 * dispatch; an error dispatch renders the error of a request decided already
	 * (a refusal's own error page must not be refused again).
	 */
	private static boolean skipDispatch(HttpServletRequest request) {
		return request.getDispatcherType() == DispatcherType.ASYNC
				|| request.getAttribute(WebUtils.ERROR_REQUEST_URI_ATTRIBUTE) != null;
	}

	/**
	 * Returns whether a request passes through unfiltered.
	 * @param request the request
	 * @return {@code true} when there are no route rules
	 */
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return this.rules.isEmpty();
	}

	/**
	 * Limits a request by the rules that match it: once per request, on its
	 * first dispatch. What the rules decide and answer is {@link RouteCall}'s;
	 * this filter adapts the request, sends a refusal through the
	 * {@link Rejections}, and tells the call when the response is complete: at
	 * once, or when an asynchronous request completes.
	 * @param request the request
	 * @param response the response
	 * @param chain the rest of the chain
	 * @throws ServletException from the chain
	 * @throws IOException from the chain or writing a refusal
	 */
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		// Set by doFilter: read once there, then handed on rather than looked up in the attribute map again.
		ServletExchange exchange = new ServletExchange(request, response, this.ipResolver,
				ServletHeaders.attachedDisclosures(request));
		MatchedLimits limits = this.rules.matching(exchange);
		if (limits.isEmpty()) {
			chain.doFilter(request, response);
			return;
		}
		RouteCall call = this.limits.call(exchange, limits, null);
		if (call.advance() == RouteCall.Step.REFUSED) {
			try {
				this.rejections.send(request, response, call.refusal());
			}
			finally {
				call.end(response.getStatus(), false, false);
			}
			return;
		}
		if (!call.endMatters()) {
			chain.doFilter(request, response);
			return;
		}
		try {
			chain.doFilter(request, response);
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			call.end(response.getStatus(), true, false);
			throw ex;
		}
		if (request.isAsyncStarted()) {
			request.getAsyncContext().addListener(new OnCompletion(call), request, response);
			return;
		}
		call.end(response.getStatus(), false, false);
	}

	/**
	 * Ends a route call once its asynchronous request completes, with its final
	 * status and whether it failed (an error or a timeout) on the way.
	 */
	private static final class OnCompletion implements AsyncListener {

		private final RouteCall call;

		private volatile boolean failed;

		OnCompletion(RouteCall call) {
			this.call = call;
		}

		@Override
		public void onComplete(AsyncEvent event) {
			// The response it was added with: the filter's own.
			this.call.end(((HttpServletResponse) event.getSuppliedResponse()).getStatus(), this.failed, false);
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			this.failed = true;
		}

		@Override
		public void onError(AsyncEvent event) {
			this.failed = true;
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			// A new async cycle keeps this listener only if re-added: call back on this one's completion.
			event.getAsyncContext().addListener(this, event.getSuppliedRequest(), event.getSuppliedResponse());
		}

	}

}

package dev.ratelimit.web;

import java.io.IOException;
import java.util.ArrayList;
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
import org.springframework.expression.EvaluationContext;
import org.springframework.web.filter.GenericFilterBean;
import org.springframework.web.util.WebUtils;

import dev.ratelimit.concurrency.ConcurrencyLimiter;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.OutcomeSettlement;

/**
 * Enforces the route rules of {@code rate-limit.routes} before the request
 * body is read or a controller runs. An allowed request continues with the
 * rate-limit header fields set; a denied one is answered here, through the
 * application's {@link RejectionHandler}, without reaching Spring MVC.
 * <p>
 * A rule with {@code count-on} counts requests by their outcome: the units are
 * taken before the request runs, so a caller over the limit is refused before
 * the application sees it, and given back once the response is complete when
 * its status is not listed.
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

	private final RateLimiter limiter;

	private final KeyExpressions expressions;

	private final ClientIpResolver ipResolver;

	private final RateLimitHeaders headers;

	private final Rejections rejections;

	private final RoutePermits permits;

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
		this.rules = new RouteRules(routes);
		this.permits = RoutePermits.of(routes, concurrency);
		this.limiter = limiter;
		this.expressions = expressions;
		this.ipResolver = ipResolver;
		this.headers = headers;
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
	 * first dispatch.
	 * @param request the request
	 * @param response the response
	 * @param chain the rest of the chain
	 * @throws ServletException from the chain
	 * @throws IOException from the chain or writing a refusal
	 */
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		MatchedLimits limits = matchingLimits(request);
		if (limits.isEmpty()) {
			chain.doFilter(request, response);
			return;
		}
		List<BoundPolicy> policies = limits.policies();
		// Set by doFilter: read once here, then handed on rather than looked up in the attribute map again.
		Disclosures disclosures = ServletHeaders.attachedDisclosures(request);
		// Built only if an expression needs it: the built-in keys (ip, principal, global) do not.
		EvaluationContext context = this.expressions.context(new ServletKeyRequest(request, this.ipResolver), null,
				null);
		RateLimitOutcome outcome = null;
		if (!policies.isEmpty()) {
			try {
				outcome = this.limiter.acquire(requests(disclosures, policies, context));
			}
			catch (RateLimitException ex) {
				this.rejections.send(request, response, ex);
				return;
			}
			this.headers.record(disclosures, response, ServletHeaders.WRITER, outcome);
			if (!outcome.allowed()) {
				this.rejections.send(request, response, new RateLimitExceededException(outcome));
				return;
			}
		}
		// The caps come after the rate limits, as on an annotated method; a request a cap refuses is answered
		// there, and a rule counting by outcome settles it by that answer's status.
		FilterChain next = limits.caps().isEmpty() ? chain
				: new PermitHoldingChain(chain, limits, context, disclosures);
		if (outcome == null || outcome.provisional().isEmpty()) {
			next.doFilter(request, response);
			return;
		}
		continueCountingByOutcome(request, response, next, policies, outcome, context);
	}

	/** The limiter's requests for the matched policies; each disclosed one registered for the headers. */
	private List<LimitRequest> requests(Disclosures disclosures, List<BoundPolicy> policies,
			EvaluationContext context) {
		if (policies.size() == 1) {
			LimitRequest call = request(disclosures, policies.get(0), context);
			return (call != null) ? List.of(call) : List.of();
		}
		List<LimitRequest> calls = new ArrayList<>(policies.size());
		for (BoundPolicy bound : policies) {
			LimitRequest call = request(disclosures, bound, context);
			if (call != null) {
				calls.add(call);
			}
		}
		return calls;
	}

	private LimitRequest request(Disclosures disclosures, BoundPolicy bound, EvaluationContext context) {
		RateLimitPolicy policy = bound.policy();
		// A route rule is enforced on the request itself.
		if (policy.visibility().disclosed(policy.key(), true)) {
			disclosures.add(policy.name());
		}
		return bound.toRequest(this.expressions, context);
	}

	/**
	 * Continues a request that counts by outcome and settles it by its status once
	 * the response is complete: at once, or when an asynchronous request
	 * completes. An exception from the chain counts as 500.
	 */
	private void continueCountingByOutcome(HttpServletRequest request, HttpServletResponse response,
			FilterChain chain, List<BoundPolicy> policies, RateLimitOutcome outcome, EvaluationContext context)
			throws ServletException, IOException {
		try {
			chain.doFilter(request, response);
		}
		catch (IOException | ServletException | RuntimeException ex) {
			OutcomeSettlement.settle(policies, outcome, context, null, ex, HttpServletResponse.SC_INTERNAL_SERVER_ERROR);
			throw ex;
		}
		if (request.isAsyncStarted()) {
			// After an error or a timeout the status is at least 500, unless the application set an error of its own.
			request.getAsyncContext()
				.addListener(new OnCompletion(response, (status, failed, failure) -> OutcomeSettlement.settle(policies,
						outcome, context, null, failure, (failed && status < 400) ? HttpServletResponse.SC_INTERNAL_SERVER_ERROR
								: status)));
			return;
		}
		OutcomeSettlement.settle(policies, outcome, context, null, null, response.getStatus());
	}

	/**
	 * Calls back once an asynchronous request completes, with its final status
	 * and whether it failed (an error or a timeout) on the way.
	 */
	private static final class OnCompletion implements AsyncListener {

		private final HttpServletResponse response;

		private final Completion completion;

		private volatile boolean failed;

		OnCompletion(HttpServletResponse response, Completion completion) {
			this.response = response;
			this.completion = completion;
		}

		@Override
		public void onComplete(AsyncEvent event) {
			this.completion.completed(this.response.getStatus(), this.failed, event.getThrowable());
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
			event.getAsyncContext().addListener(this);
		}

		/** What to do once the request is complete. */
		@FunctionalInterface
		interface Completion {

			void completed(int status, boolean failed, @Nullable Throwable failure);

		}

	}

	/**
	 * Takes a route's permits, runs the rest of the chain holding them, and gives
	 * them back once the response is complete: at once, or when an asynchronous
	 * request completes; telling each how the request ended. A refusal is
	 * answered here.
	 */
	private final class PermitHoldingChain implements FilterChain {

		private final FilterChain chain;

		private final MatchedLimits limits;

		private final EvaluationContext context;

		private final Disclosures disclosures;

		PermitHoldingChain(FilterChain chain, MatchedLimits limits, EvaluationContext context,
				Disclosures disclosures) {
			this.chain = chain;
			this.limits = limits;
			this.context = context;
			this.disclosures = disclosures;
		}

		@Override
		public void doFilter(ServletRequest request, ServletResponse response) throws IOException, ServletException {
			HttpServletRequest httpRequest = (HttpServletRequest) request;
			HttpServletResponse httpResponse = (HttpServletResponse) response;
			List<Permit> permits;
			try {
				permits = RateLimitFilter.this.permits.take(this.limits.caps(), this.context, this.disclosures);
			}
			catch (RateLimitException ex) {
				RateLimitFilter.this.rejections.send(httpRequest, httpResponse, ex);
				return;
			}
			try {
				this.chain.doFilter(request, response);
			}
			catch (IOException | ServletException | RuntimeException | Error ex) {
				RoutePermits.release(permits, Permit.Ending.FAILED);
				throw ex;
			}
			if (request.isAsyncStarted()) {
				request.getAsyncContext()
					.addListener(new OnCompletion(httpResponse,
							(status, failed, failure) -> RoutePermits.release(permits, RoutePermits.ending(status, failed))));
				return;
			}
			RoutePermits.release(permits, RoutePermits.ending(httpResponse.getStatus(), false));
		}

	}

	/**
	 * The policies and caps of every rule that matches, each once; the path is
	 * compared as a string where {@link RouteMatcher} can, parsed at most once
	 * otherwise.
	 */
	private MatchedLimits matchingLimits(HttpServletRequest request) {
		String method = request.getMethod();
		RouteMatcher.ParsedPath path = new RouteMatcher.ParsedPath();
		return this.rules.matching((matcher) -> matcher.matches(method, request, path));
	}

}

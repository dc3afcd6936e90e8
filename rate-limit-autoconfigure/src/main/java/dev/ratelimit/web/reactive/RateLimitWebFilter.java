package dev.ratelimit.web.reactive;

import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import dev.ratelimit.web.RouteRule;
import dev.ratelimit.web.RouteRules;
import dev.ratelimit.web.servlet.RateLimitFilter;


/**
 * Enforces the route rules of {@code rate-limit.routes} in a WebFlux
 * application, as {@link RateLimitFilter} does in a servlet one: the same
 * rules, path matching, keys (client addresses with the same trusted-proxy
 * rules), header fields and refusals. An allowed request continues with the
 * header fields set; a refused one is answered here through
 * {@link ReactiveRejections}. What a matching rule's policies do to a request
 * is {@link ReactiveRouteLimits}'s, shared with a gateway route's filter.
 * <p>
 * The event loop never waits: a decision the in-memory backend takes without
 * waiting is taken inline, any other asynchronously, and the request then goes
 * on on its own event loop (see {@link ReactiveRouteLimits}).
 * <p>
 * It also puts each request's exchange in the Reactor context of the rest of
 * the chain, where the calls of limited methods read their request, as Spring's
 * {@link ServerWebExchangeContextFilter} does (under the same key): with route
 * rules that filter is not needed, and a request passes one filter fewer.
 */
public final class RateLimitWebFilter implements WebFilter, Ordered {

	private final RouteRules rules;

	private final ReactiveRouteLimits limits;

	private final int order;

	/**
	 * Creates the filter.
	 * @param routes the route rules, in configuration order
	 * @param limits applies a rule's policies to a request
	 * @param order the filter's order ({@code rate-limit.filter.order})
	 * @throws IllegalArgumentException when a rule has a concurrency cap the limits have no limiter for
	 */
	public RateLimitWebFilter(List<RouteRule> routes, ReactiveRouteLimits limits, int order) {
		this(new RouteRules(routes), limits, order);
	}

	/**
	 * Creates the filter.
	 * @param rules the route rules, with the paths their caps leave out
	 * @param limits applies a rule's policies to a request
	 * @param order the filter's order ({@code rate-limit.filter.order})
	 * @throws IllegalArgumentException when a rule has a concurrency cap the limits have no limiter for
	 */
	public RateLimitWebFilter(RouteRules rules, ReactiveRouteLimits limits, int order) {
		limits.check(rules.routes());
		this.rules = rules;
		this.limits = limits;
		this.order = order;
	}

	/**
	 * Returns the route rules, in configuration order.
	 * @return the rules
	 */
	public List<RouteRule> getRoutes() {
		return this.rules.routes();
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ReactiveExchange web = this.limits.exchange(exchange);
		return this.limits.apply(web, this.rules.matching(web), (continued) -> proceed(continued, chain));
	}

	/** The rest of the chain, with the exchange in its context for the limited methods it calls. */
	private static Mono<Void> proceed(ServerWebExchange exchange, WebFilterChain chain) {
		return chain.filter(exchange)
			.contextWrite((context) -> context.put(ServerWebExchangeContextFilter.EXCHANGE_CONTEXT_ATTRIBUTE, exchange));
	}

	@Override
	public int getOrder() {
		return this.order;
	}

}

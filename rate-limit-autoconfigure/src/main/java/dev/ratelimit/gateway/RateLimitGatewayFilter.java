package dev.ratelimit.gateway;

import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.web.MatchedLimits;
import dev.ratelimit.web.reactive.ReactiveRouteLimits;

/**
 * A gateway route's {@code RateLimit} filter: its policies applied to each
 * request the route serves, before it is proxied.
 */
final class RateLimitGatewayFilter implements GatewayFilter {

	private final MatchedLimits policies;

	private final ReactiveRouteLimits limits;

	RateLimitGatewayFilter(List<BoundPolicy> policies, ReactiveRouteLimits limits) {
		this.policies = MatchedLimits.of(policies);
		this.limits = limits;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		return this.limits.apply(exchange, this.policies, chain::filter);
	}

	@Override
	public String toString() {
		return RateLimitGatewayFilterFactory.NAME + this.policies.policies().stream().map((bound) -> bound.policy().name()).toList();
	}

}

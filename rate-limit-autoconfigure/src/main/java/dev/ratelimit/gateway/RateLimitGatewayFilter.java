package dev.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.web.MatchedLimits;
import dev.ratelimit.web.reactive.ReactiveRouteLimits;

/**
 * A gateway route's {@code RateLimit} filter: its policies and concurrency
 * caps applied to each request the route serves, before it is proxied, as a
 * route rule applies them.
 */
final class RateLimitGatewayFilter implements GatewayFilter {

	private final MatchedLimits limits;

	private final ReactiveRouteLimits routeLimits;

	RateLimitGatewayFilter(MatchedLimits limits, ReactiveRouteLimits routeLimits) {
		this.limits = limits;
		this.routeLimits = routeLimits;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		return this.routeLimits.apply(exchange, this.limits, chain::filter);
	}

	@Override
	public String toString() {
		List<String> names = new ArrayList<>();
		this.limits.policies().forEach((bound) -> names.add(bound.policy().name()));
		this.limits.caps().forEach((cap) -> names.add(cap.limit().name()));
		return RateLimitGatewayFilterFactory.NAME + names;
	}

}

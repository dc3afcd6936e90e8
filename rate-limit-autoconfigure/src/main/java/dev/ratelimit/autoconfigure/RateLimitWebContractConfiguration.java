package dev.ratelimit.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.web.BudgetHeaders;
import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.web.HeaderMode;
import dev.ratelimit.web.RateLimitHeaders;
import dev.ratelimit.web.RouteLimits;
import dev.ratelimit.web.WebContract;

/**
 * The parts of the HTTP contract every web stack writes the same way: the
 * rate-limit and budget header fields, and what a route's limits decide and
 * answer. The servlet and the reactive
 * integrations ({@link RateLimitWebConfiguration},
 * {@link RateLimitReactiveWebConfiguration}) add their own adapters around them.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication
class RateLimitWebContractConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitHeaders rateLimitHeaders(RateLimitProperties properties) {
		return new RateLimitHeaders(properties.getHeaders().getMode(), properties.getHeaders().isIncludeShadow());
	}

	@Bean
	@ConditionalOnMissingBean
	WebContract rateLimitWebContract(ClientIpResolver ipResolver, RateLimitHeaders headers,
			BudgetHeaders budgetHeaders) {
		return new WebContract(ipResolver, headers, budgetHeaders);
	}

	/** What a route's limits decide and answer: for the route rules of every stack, and a gateway's routes. */
	@Bean
	@ConditionalOnMissingBean
	RouteLimits rateLimitRouteLimits(RateLimiter limiter, ConcurrencyLimiters concurrency, KeyExpressions expressions,
			RateLimitHeaders headers) {
		return new RouteLimits(limiter, concurrency, expressions, headers);
	}

	@Bean
	@ConditionalOnMissingBean
	BudgetHeaders rateLimitBudgetHeaders(RateLimitProperties properties) {
		return new BudgetHeaders(properties.getHeaders().getMode() != HeaderMode.NONE);
	}

}

package dev.ratelimit.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.web.BudgetHeaders;
import dev.ratelimit.web.HeaderMode;
import dev.ratelimit.web.RateLimitHeaders;
import dev.ratelimit.web.WebContract;

/**
 * The parts of the HTTP contract both web stacks write the same way: the
 * rate-limit and budget header fields. The servlet and the reactive
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

	@Bean
	@ConditionalOnMissingBean
	BudgetHeaders rateLimitBudgetHeaders(RateLimitProperties properties) {
		return new BudgetHeaders(properties.getHeaders().getMode() != HeaderMode.NONE);
	}

}

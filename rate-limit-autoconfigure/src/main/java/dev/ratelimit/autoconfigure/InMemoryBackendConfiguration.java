package dev.ratelimit.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.memory.InMemoryRateLimitBackend;

/**
 * The in-memory backend, the default when {@code rate-limit.backend} is unset.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "rate-limit", name = "backend", havingValue = "memory", matchIfMissing = true)
class InMemoryBackendConfiguration {

	private static final Log logger = LogFactory.getLog(InMemoryBackendConfiguration.class);

	@Bean
	@ConditionalOnMissingBean
	RateLimitBackend rateLimitBackend(InMemoryKeyBounds bounds, TimeSource timeSource, LimitRegistry limits) {
		for (RateLimitPolicy policy : limits.rateLimits().all()) {
			if (policy.prefetch() > 0) {
				// Not an error: the same configuration may serve a Redis profile elsewhere.
				logger.warn("rate-limit.policies." + policy.name() + ".prefetch has no effect with the memory backend, "
						+ "where every decision is already local; it applies with rate-limit.backend=redis");
			}
		}
		return new InMemoryRateLimitBackend(timeSource, bounds.rateLimits());
	}

}

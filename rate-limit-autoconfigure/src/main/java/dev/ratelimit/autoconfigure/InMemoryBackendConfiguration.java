package dev.ratelimit.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.memory.InMemoryRateLimitBackend;

/**
 * The in-memory backend, the default when {@code rate-limit.backend} is unset.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "rate-limit", name = "backend", havingValue = "memory", matchIfMissing = true)
class InMemoryBackendConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitBackend rateLimitBackend(RateLimitProperties properties, TimeSource timeSource) {
		long maxKeys = properties.getMemory().getMaxKeys();
		if (maxKeys <= 0) {
			throw new RateLimitConfigurationException(
					"Property rate-limit.memory.max-keys with value '" + maxKeys + "' is invalid: must be positive",
					"Set rate-limit.memory.max-keys above the number of keys active at once.", null);
		}
		return new InMemoryRateLimitBackend(timeSource, maxKeys);
	}

}

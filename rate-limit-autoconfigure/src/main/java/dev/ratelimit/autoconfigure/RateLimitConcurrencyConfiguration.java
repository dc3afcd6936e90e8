package dev.ratelimit.autoconfigure;

import java.util.concurrent.ThreadLocalRandom;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.core.LimitListener;
import dev.ratelimit.concurrency.AdaptiveConcurrencyLimiter;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.NamedLimits;

/**
 * Concurrency caps: the configured policies, the local bulkheads, the adaptive
 * caps and, with the Redis backend, the distributed semaphore of expiring
 * permits.
 */
@Configuration(proxyBeanMethods = false)
class RateLimitConcurrencyConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LocalConcurrencyLimiter rateLimitLocalConcurrencyLimiter(InMemoryKeyBounds bounds, TimeSource timeSource) {
		return new LocalConcurrencyLimiter(bounds.concurrency(), timeSource);
	}

	@Bean
	@ConditionalOnMissingBean
	AdaptiveConcurrencyLimiter rateLimitAdaptiveConcurrencyLimiter(TimeSource timeSource,
			ObjectProvider<LimitListener> listeners) {
		return new AdaptiveConcurrencyLimiter(timeSource, () -> ThreadLocalRandom.current().nextDouble(),
				LimitListener.of(listeners.orderedStream().toList()));
	}

	@Bean
	@ConditionalOnMissingBean
	ConcurrencyLimiters rateLimitConcurrencyLimiters(LocalConcurrencyLimiter local,
			ObjectProvider<DistributedConcurrencyLimiter> distributed, AdaptiveConcurrencyLimiter adaptive,
			ObjectProvider<LimitListener> listeners) {
		return new ConcurrencyLimiters(local, distributed.getIfAvailable(), adaptive,
				LimitListener.of(listeners.orderedStream().toList()));
	}

}

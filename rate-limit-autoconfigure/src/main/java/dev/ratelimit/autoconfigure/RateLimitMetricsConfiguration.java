package dev.ratelimit.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.metrics.MicrometerRateLimitListener;

/**
 * Micrometer metrics of the limiter, when Micrometer is on the classpath. The
 * registry is looked up on first use, so the listener works whichever
 * auto-configuration creates the registry, and counts nothing without one.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(MeterRegistry.class)
class RateLimitMetricsConfiguration {

	@Bean
	@ConditionalOnMissingBean
	MicrometerRateLimitListener rateLimitMetricsListener(ObjectProvider<MeterRegistry> registry) {
		return new MicrometerRateLimitListener(registry::getIfUnique);
	}

}

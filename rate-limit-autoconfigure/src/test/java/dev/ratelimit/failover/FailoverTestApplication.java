package dev.ratelimit.failover;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * An application instance of the failover tests: the starter on the Redis
 * backend with nothing of its own but a meter registry; the tests use its
 * {@link dev.ratelimit.core.RateLimiter} and {@link dev.ratelimit.budget.CostBudgets}
 * as a service's code would.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
class FailoverTestApplication {

	@Bean
	SimpleMeterRegistry meterRegistry() {
		return new SimpleMeterRegistry();
	}

}

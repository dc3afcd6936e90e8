package dev.ratelimit.autoconfigure;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Checks, in an application processed ahead of time, that the rate-limit
 * properties it starts with pick the beans it was processed with
 * ({@link ProcessedConditions}). Present only in what Spring AOT processes
 * (which sets {@code spring.aot.processing} while it runs), whether the limiter
 * was processed on or off; an application started on the JVM, whose conditions
 * see the properties it starts with, has nothing to check and creates nothing.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnBooleanProperty("spring.aot.processing")
public class RateLimitAotConfiguration {

	@Bean
	static ProcessedConditions rateLimitProcessedConditions(Environment environment, ListableBeanFactory beans) {
		return new ProcessedConditions(environment, beans);
	}

}

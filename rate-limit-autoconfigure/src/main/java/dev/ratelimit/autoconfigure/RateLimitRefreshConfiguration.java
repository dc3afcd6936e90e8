package dev.ratelimit.autoconfigure;

import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.live.LimitOverrides;
import dev.ratelimit.plans.RecentCallers;

/**
 * Rebuilds the limits when Spring Cloud refreshes the configuration (its
 * {@code EnvironmentChangeEvent}, raised by {@code /actuator/refresh}, a
 * config server's bus event, or a Kubernetes config map reload). Only with
 * spring-cloud-context in the application: the starter does not bring it.
 * <p>
 * The {@link RateLimitProperties} bean itself is kept out of Spring Cloud's
 * rebinding ({@code spring.cloud.refresh.never-refreshable}, unless the
 * application sets that property): the limits are rebuilt by
 * {@link LimitRefresher}, all or nothing, while rebinding would change the
 * bean in place, half-valid, under the beans that read it at start-up.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = RateLimitRefreshConfiguration.EVENT)
class RateLimitRefreshConfiguration {

	static final String EVENT = "org.springframework.cloud.context.environment.EnvironmentChangeEvent";

	private static final Log logger = LogFactory.getLog(RateLimitRefreshConfiguration.class);

	private static final String NEVER_REFRESHABLE = "spring.cloud.refresh.never-refreshable";

	@Bean
	@ConditionalOnMissingBean
	LimitRefresher rateLimitRefresher(ConfigurableEnvironment environment, LimitRegistry registry,
			KeyExpressions expressions, LimitOverrides overrides,
			ObjectProvider<DistributedConcurrencyLimiter> distributed, ObjectProvider<RecentCallers> recentCallers) {
		keepPropertiesOutOfRebinding(environment);
		return new LimitRefresher(environment, registry, expressions, overrides,
				distributed.getIfAvailable() != null, recentCallers::getIfAvailable);
	}

	@Bean
	RefreshListener rateLimitRefreshListener(LimitRefresher refresher) {
		return new RefreshListener(refresher);
	}

	private static void keepPropertiesOutOfRebinding(ConfigurableEnvironment environment) {
		String properties = RateLimitProperties.class.getName();
		String set = environment.getProperty(NEVER_REFRESHABLE);
		if (set == null) {
			// Spring Cloud's own default, plus ours; last, so that the application's value wins.
			environment.getPropertySources()
				.addLast(new MapPropertySource("rateLimitNeverRefreshable",
						Map.of(NEVER_REFRESHABLE, "com.zaxxer.hikari.HikariDataSource," + properties)));
		}
		else if (!set.contains(properties)) {
			logger.warn(NEVER_REFRESHABLE + " does not name " + properties + ": a refresh will rebind the "
					+ "rate-limit properties in place besides rebuilding the limits, and a bad value then fails the "
					+ "refresh; add " + properties + " to it");
		}
	}

	/**
	 * Hands a refresh to the {@link LimitRefresher}, first among the listeners,
	 * so that the limits are rebuilt before any bean reacting to the same
	 * refresh runs.
	 */
	static final class RefreshListener implements ApplicationListener<EnvironmentChangeEvent>, Ordered {

		private final LimitRefresher refresher;

		RefreshListener(LimitRefresher refresher) {
			this.refresher = refresher;
		}

		@Override
		public void onApplicationEvent(EnvironmentChangeEvent event) {
			this.refresher.refresh(event.getKeys());
		}

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

	}

}

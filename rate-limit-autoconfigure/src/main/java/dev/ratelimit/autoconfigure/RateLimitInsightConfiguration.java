package dev.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.springframework.beans.factory.ObjectProvider;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.UniqueIds;
import dev.ratelimit.insight.HeavyHitters;
import dev.ratelimit.insight.TopKeysExchange;
import dev.ratelimit.insight.TopKeysPublisher;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.redis.RedisTopKeysExchange;

/**
 * Each limit's heaviest keys ({@code rate-limit.heavy-hitters.*}): a listener
 * of every decision, and with the Redis backend the exchange through which the
 * instances share their counts, published by a background thread.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "rate-limit.heavy-hitters.enabled", matchIfMissing = true)
class RateLimitInsightConfiguration {

	@Bean
	@ConditionalOnMissingBean
	HeavyHitters rateLimitHeavyHitters(RateLimitProperties properties, TimeSource timeSource) {
		RateLimitProperties.HeavyHitters settings = properties.getHeavyHitters();
		return new HeavyHitters(settings.getTrackedKeys(), settings.getWindow().toNanos(),
				() -> timeSource.currentTimeMicros() * 1_000L);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RedisLimiterConnection.class)
	TopKeysExchange rateLimitTopKeysExchange(RedisLimiterConnection connection, RateLimitProperties properties) {
		RateLimitProperties.HeavyHitters settings = properties.getHeavyHitters();
		// A snapshot counts while it is the publisher's latest: a missed publish or two is no gap.
		Duration keep = settings.getPublishInterval().multipliedBy(3).plus(settings.getWindow());
		return new RedisTopKeysExchange(connection.connectionFactory(), properties.getKeyPrefix(), UniqueIds.next(),
				keep, System::currentTimeMillis);
	}

	@Bean
	TopKeysPublishing rateLimitTopKeysPublishing(HeavyHitters heavyHitters, ObjectProvider<TopKeysExchange> exchange,
			RateLimitProperties properties) {
		return new TopKeysPublishing(heavyHitters, exchange.getIfAvailable(),
				properties.getHeavyHitters().getPublishInterval());
	}

	/** Publishes this instance's counts every interval while the context runs. */
	static final class TopKeysPublishing implements SmartLifecycle {

		private final HeavyHitters heavyHitters;

		private final @Nullable TopKeysExchange exchange;

		private final Duration interval;

		private volatile ScheduledExecutorService timer;

		TopKeysPublishing(HeavyHitters heavyHitters, @Nullable TopKeysExchange exchange, Duration interval) {
			this.heavyHitters = heavyHitters;
			this.exchange = exchange;
			this.interval = interval;
		}

		@Override
		public void start() {
			if (this.exchange == null) {
				// One instance with the in-memory backend: it is its own fleet.
				return;
			}
			ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor((task) -> {
				Thread thread = new Thread(task, "rate-limit-top-keys");
				thread.setDaemon(true);
				return thread;
			});
			long millis = this.interval.toMillis();
			timer.scheduleWithFixedDelay(new TopKeysPublisher(this.heavyHitters, this.exchange), millis,
					millis, TimeUnit.MILLISECONDS);
			this.timer = timer;
		}

		@Override
		public void stop() {
			ScheduledExecutorService timer = this.timer;
			if (timer != null) {
				timer.shutdownNow();
				this.timer = null;
			}
		}

		@Override
		public boolean isRunning() {
			return this.timer != null;
		}

	}

}

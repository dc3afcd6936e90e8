package dev.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.UniqueIds;
import dev.ratelimit.insight.FleetExchange;
import dev.ratelimit.insight.FleetPublisher;
import dev.ratelimit.insight.FleetShared;
import dev.ratelimit.insight.HeavyHitters;
import dev.ratelimit.redis.RedisFleetExchange;
import dev.ratelimit.redis.RedisLimiterConnection;

/**
 * What the operator's answers are counted from: each limit's heaviest keys
 * ({@code rate-limit.heavy-hitters.*}, a listener of every decision), and with
 * the Redis backend the exchange through which the instances share what they
 * count (heavy hitters, recent callers by plan), published by a background
 * thread every {@code rate-limit.heavy-hitters.publish-interval}.
 */
@Configuration(proxyBeanMethods = false)
class RateLimitInsightConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "rate-limit.heavy-hitters.enabled", matchIfMissing = true)
	HeavyHitters rateLimitHeavyHitters(RateLimitProperties properties, TimeSource timeSource) {
		RateLimitProperties.HeavyHitters settings = properties.getHeavyHitters();
		return new HeavyHitters(settings.getTrackedKeys(), settings.getWindow().toNanos(),
				() -> timeSource.currentTimeMicros() * 1_000L);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RedisLimiterConnection.class)
	FleetExchange rateLimitFleetExchange(RedisLimiterConnection connection, RateLimitProperties properties) {
		RateLimitProperties.HeavyHitters settings = properties.getHeavyHitters();
		// A text counts while it is the publisher's latest: a missed publish or two is no gap.
		Duration keep = settings.getPublishInterval().multipliedBy(3).plus(settings.getWindow());
		return new RedisFleetExchange(connection, properties.getKeyPrefix(), UniqueIds.next(),
				keep, System::currentTimeMillis);
	}

	@Bean
	FleetPublishing rateLimitFleetPublishing(ObjectProvider<FleetShared> shared, ObjectProvider<FleetExchange> exchange,
			RateLimitProperties properties) {
		return new FleetPublishing(shared, exchange.getIfAvailable(), properties.getHeavyHitters().getPublishInterval());
	}

	/** Publishes this instance's counts every interval while the context runs. */
	static final class FleetPublishing implements SmartLifecycle {

		private final ObjectProvider<FleetShared> shared;

		private final @Nullable FleetExchange exchange;

		private final Duration interval;

		private volatile @Nullable ScheduledExecutorService timer;

		FleetPublishing(ObjectProvider<FleetShared> shared, @Nullable FleetExchange exchange, Duration interval) {
			this.shared = shared;
			this.exchange = exchange;
			this.interval = interval;
		}

		@Override
		public void start() {
			List<FleetShared> counts = this.shared.orderedStream().toList();
			if (this.exchange == null || counts.isEmpty()) {
				// One instance with the in-memory backend: it is its own fleet.
				return;
			}
			ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor((task) -> {
				Thread thread = new Thread(task, "rate-limit-fleet-publisher");
				thread.setDaemon(true);
				return thread;
			});
			long millis = this.interval.toMillis();
			timer.scheduleWithFixedDelay(new FleetPublisher(counts, this.exchange), millis, millis,
					TimeUnit.MILLISECONDS);
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

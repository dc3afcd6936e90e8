package dev.ratelimit.autoconfigure;

import java.util.List;
import java.util.function.IntSupplier;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.aop.AnnotatedBeans;
import dev.ratelimit.aop.LimitAnnotations;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.metrics.MicrometerLimitListener;
import dev.ratelimit.concurrency.AdaptiveConcurrencyLimiter;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.redis.RedisLimiterConnection;

/**
 * Micrometer metrics of the limiter, when Micrometer is on the classpath. The
 * registry is looked up on first use, so the listener works whichever
 * auto-configuration creates the registry, and counts nothing without one.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(MeterRegistry.class)
class RateLimitMetricsConfiguration {

	private final MeterRegistryLookup registryLookup;

	RateLimitMetricsConfiguration(ObjectProvider<MeterRegistry> registry) {
		this.registryLookup = new MeterRegistryLookup(registry);
	}

	@Bean
	@ConditionalOnMissingBean
	MicrometerLimitListener rateLimitMetricsListener(RateLimitProperties properties) {
		return new MicrometerLimitListener(this.registryLookup, properties.getMetrics().getNearLimit());
	}

	/**
	 * Gauges of whether Redis answers and of the permits in use, and every
	 * limit's counters at 0, registered once every singleton (the registry among
	 * them) exists.
	 */
	@Bean
	SmartInitializingSingleton rateLimitGauges(ObjectProvider<MeterRegistry> registry,
			ObjectProvider<RedisLimiterConnection> redis, ObjectProvider<ConcurrencyLimiters> limiters,
			ObjectProvider<AdaptiveConcurrencyLimiter> adaptive, ObjectProvider<InMemoryKeyBounds> bounds,
			ObjectProvider<MicrometerLimitListener> listener, ObjectProvider<LimitRegistry> limitRegistry,
			ObjectProvider<AnnotatedBeans> annotatedBeans, ObjectProvider<LimitAnnotations> annotations,
			ObjectProvider<CostBudgets> budgets, ObjectProvider<DistributedConcurrencyLimiter> distributed,
			RateLimitProperties properties) {
		return () -> {
			this.registryLookup.settle();
			MeterRegistry meters = registry.getIfUnique();
			if (meters == null) {
				return;
			}
			// Counted from their first scrape at 0, so that a limit's first events after a start are an increase.
			LimitRegistry configured = limitRegistry.getIfAvailable();
			List<LimitDefinition<? extends Limit>> setUp = (configured != null) ? LimitsSetUp.of(configured,
					annotatedBeans.getIfAvailable(), annotations.getIfAvailable()) : List.of();
			boolean remote = properties.getBackend() == RateLimitProperties.Backend.REDIS;
			MicrometerLimitListener counters = listener.getIfUnique();
			if (counters != null) {
				for (LimitDefinition<? extends Limit> definition : setUp) {
					counters.registerAtZero(definition, LimitsSetUp.storeCanFail(definition.limit(), remote));
				}
			}
			InMemoryKeyBounds memory = bounds.getIfAvailable();
			if (memory != null) {
				register(meters, "rate-limit", memory.rateLimits());
				register(meters, "budget", memory.budgets());
				register(meters, "concurrency", memory.concurrency());
				for (LimitDefinition<? extends Limit> definition : setUp) {
					Limit limit = definition.limit();
					if (LimitsSetUp.decidedInMemory(limit, remote)) {
						KeyBound bound = switch (limit.kind()) {
							case RATE_LIMIT -> memory.rateLimits();
							case BUDGET -> memory.budgets();
							case CONCURRENCY -> memory.concurrency();
						};
						overflowDecisions(meters, limit.kind().label(), bound.of(limit.name()));
					}
				}
			}
			RedisLimiterConnection connection = redis.getIfAvailable();
			if (connection != null) {
				Gauge.builder("rate.limit.redis.silent", connection.silence(), (s) -> s.isAnySilent() ? 1 : 0)
					.description("1 while Redis does not answer the limiter (calls fail at once and the failure modes "
							+ "decide, until it answers a probe), else 0")
					.register(meters);
				for (String cause : connection.failovers().keySet()) {
					// Registered at 0, so that the first failover after a start is an increase.
					FunctionCounter.builder("rate.limit.redis.failovers", connection,
							(c) -> c.failovers().getOrDefault(cause, 0L))
						.description("Times the limiter's Redis connection followed a failover: a sentinel's "
								+ "switch-master, a READONLY answer, a connection the server ended")
						.tag("cause", cause)
						.register(meters);
				}
				Gauge.builder("rate.limit.redis.replicas.lagging", connection, (c) -> c.laggingReplicas().size())
					.description("Primaries whose replicas do not acknowledge the limiter's durable writes now: "
							+ "those writes follow their failure modes")
					.register(meters);
				pendingWrites(meters, budgets.getIfAvailable(), distributed.getIfAvailable());
				if (connection.coalesces()) {
					DistributionSummary batches = DistributionSummary.builder("rate.limit.redis.batch.size")
						.description("Decisions per call the limiter sent to Redis while decisions coalesce: 1 for "
								+ "a decision that went alone, more for those that waited behind a call in flight")
						.baseUnit("decisions")
						.register(meters);
					connection.onBatch(batches::record);
				}
			}
			ConcurrencyLimiters concurrency = limiters.getIfAvailable();
			if (concurrency != null) {
				concurrency.onNewPolicy((policy, inFlight) -> Gauge
					.builder("rate.limit.concurrency.permits.in.use", inFlight, IntSupplier::getAsInt)
					.description("Permits of a concurrency cap this instance holds")
					.tag("policy", policy)
					// Gauges hold their object weakly; nothing else holds this supplier, so without
					// this the collector would take it and the gauge would read NaN.
					.strongReference(true)
					.register(meters));
			}
			AdaptiveConcurrencyLimiter adaptiveCaps = adaptive.getIfAvailable();
			if (adaptiveCaps != null) {
				adaptiveCaps.onNewCap((policy, limit) -> Gauge
					.builder("rate.limit.concurrency.limit", limit, IntSupplier::getAsInt)
					.description("The limit an adaptive concurrency cap has found: calls allowed in flight now")
					.tag("policy", policy)
					.strongReference(true)
					.register(meters));
			}
		};
	}

	/**
	 * The size of an in-memory store, the keys it dropped because their state was
	 * fresh again, and per policy not registered at start-up, once it has
	 * overflowed, the decisions taken on its overflow slots.
	 */
	/** Writes kept until Redis answers, per kind that keeps them: nonzero only through an outage. */
	private static void pendingWrites(MeterRegistry meters, @Nullable CostBudgets budgets,
			@Nullable DistributedConcurrencyLimiter distributed) {
		String description = "Writes kept in this instance until Redis answers again: budget settles and releases, "
				+ "releases of reservations and permits whose calls got no answer";
		if (budgets != null) {
			Gauge.builder("rate.limit.pending.writes", budgets, CostBudgets::pendingWrites)
				.description(description)
				.tag("kind", LimitKind.BUDGET.label())
				.register(meters);
		}
		if (distributed != null) {
			Gauge.builder("rate.limit.pending.writes", distributed, DistributedConcurrencyLimiter::pendingReleases)
				.description(description)
				.tag("kind", LimitKind.CONCURRENCY.label())
				.register(meters);
		}
	}

	private static void register(MeterRegistry meters, String store, KeyBound bound) {
		Gauge.builder("rate.limit.memory.keys", bound, KeyBound::keys)
			.description("Keys an in-memory store holds, over every policy")
			.tag("store", store)
			.register(meters);
		FunctionCounter.builder("rate.limit.memory.evictions", bound, KeyBound::dropped)
			.description("Keys an in-memory store dropped because forgetting them changed nothing")
			.tag("store", store)
			.register(meters);
		// A policy not set up at start-up gets its counter at its first overflow (registered at most once).
		bound.onOverflow((keys) -> overflowDecisions(meters, store, keys));
	}

	/** Decisions a store took on a policy's overflow slots; the bound holds the keys strongly, as the counter needs. */
	private static void overflowDecisions(MeterRegistry meters, String store, KeyBound.Keys keys) {
		FunctionCounter.builder("rate.limit.memory.overflow.decisions", keys, KeyBound.Keys::overflowDecisions)
			.description("Decisions an in-memory store took on a policy's overflow slots: new keys of a policy "
					+ "holding its bound of keys that still matter, sharing states limited like one key each")
			.tag("store", store)
			.tag("policy", keys.policy())
			.register(meters);
	}

}

package dev.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.concurrency.AdaptiveLimit;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Priority;
import dev.ratelimit.concurrency.Shedding;
import dev.ratelimit.core.AbstractLimit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitConfigurationException;

/**
 * Sets what only a concurrency cap has from {@code rate-limit.concurrency.<name>};
 * {@link LimitPropertiesBinder#CONCURRENCY} does the rest. Whether a distributed
 * cap has its Redis backend is checked once the beans are known.
 */
final class ConcurrencyPropertiesBinder {

	private ConcurrencyPropertiesBinder() {
	}

	static void bind(ConcurrencyPolicy.Builder builder, RateLimitProperties.ConcurrencyCap source) {
		AdaptiveLimit.Algorithm algorithm = source.getAdaptive().getAlgorithm();
		if (algorithm != null) {
			bindAdaptive(builder, source, algorithm);
			return;
		}
		if (source.getAdaptive().isTuned()) {
			throw new PolicyValidationException("adaptive.algorithm", null,
					"must be set (gradient2, vegas or aimd) for the other adaptive settings to apply");
		}
		if (source.getPriority() != null || !source.getShares().isEmpty() || source.isShadow()) {
			throw new PolicyValidationException((source.getPriority() != null) ? "priority"
					: source.isShadow() ? "shadow" : "shares", "set",
					"applies to adaptive caps only; set adaptive.algorithm, or remove it");
		}
		if (source.getPermits() == null) {
			throw new PolicyValidationException("permits", null, "must be set to at least 1");
		}
		builder.permits(source.getPermits())
			.maxWait(source.getMaxWait())
			.scope(source.getScope())
			.permitTtl(source.getPermitTtl())
			.rejection(source.getRejection());
	}

	/**
	 * An adaptive cap: its limit from the algorithm's settings, its key the
	 * priority expression; plans, overrides, a key of callers and permits are
	 * refused rather than ignored.
	 */
	private static void bindAdaptive(ConcurrencyPolicy.Builder builder, RateLimitProperties.ConcurrencyCap source,
			AdaptiveLimit.Algorithm algorithm) {
		RateLimitProperties.Adaptive adaptive = source.getAdaptive();
		if (source.getPermits() != null) {
			throw new PolicyValidationException("permits", source.getPermits(),
					"an adaptive cap finds its own limit; set adaptive.max-limit instead");
		}
		if (!AbstractLimit.DEFAULT_KEY.equals(source.getKey().strip())) {
			throw new PolicyValidationException("key", source.getKey(),
					"an adaptive cap protects this instance as a whole; name each call's class with priority instead");
		}
		if (!source.getPlans().isEmpty() || !source.getOverrides().isEmpty() || source.getPlan() != null) {
			throw new PolicyValidationException(source.getPlans().isEmpty() ? "overrides" : "plans", "set",
					"an adaptive cap finds its own limit; it takes no plans or overrides");
		}
		if (source.getPriority() == null && !source.getShares().isEmpty()) {
			throw new PolicyValidationException("shares", source.getShares(),
					"without a priority expression every call is in one class; set priority, or remove the shares");
		}
		builder.adaptive(new AdaptiveLimit(algorithm, adaptive.getInitialLimit(),
				adaptive.getMinLimit(), adaptive.getMaxLimit(), micros("adaptive.timeout", adaptive.getTimeout()),
				adaptive.getSmoothing(), adaptive.getRttTolerance(), adaptive.getQueueSize(),
				adaptive.getBackoffRatio(), adaptive.getLongWindow()))
			.shedding(new Shedding(shares(source.getShares()),
					source.getDefaultPriority(), micros("retry-after", source.getRetryAfter()),
					micros("retry-after-spread", source.getRetryAfterSpread())))
			.shadow(source.isShadow())
			.key((source.getPriority() != null) ? source.getPriority() : AbstractLimit.DEFAULT_KEY)
			.maxWait(source.getMaxWait())
			.scope(source.getScope());
	}

	/**
	 * The shares configured, each class not listed keeping its default share:
	 * giving critical and normal theirs must not leave background with none.
	 * Shares that pass the whole limit only with those defaults say so, naming
	 * them, rather than a total nobody wrote.
	 */
	private static Map<Priority, Integer> shares(Map<Priority, Integer> configured) {
		Map<Priority, Integer> shares = new EnumMap<>(Shedding.DEFAULT_SHARES);
		shares.putAll(configured);
		int total = 0;
		for (Integer percent : shares.values()) {
			total += (percent != null) ? percent : 0;
		}
		if (total > 100) {
			List<String> defaulted = new ArrayList<>();
			for (Priority priority : Priority.values()) {
				int percent = Shedding.DEFAULT_SHARES.getOrDefault(priority, 0);
				if (!configured.containsKey(priority) && percent > 0) {
					defaulted.add(priority.label() + " " + percent + "%");
				}
			}
			if (!defaulted.isEmpty()) {
				throw new PolicyValidationException("shares", configured, "add up to " + total
						+ "% with the default share of each class not listed (" + String.join(", ", defaulted)
						+ "), more than the whole limit; give those classes their shares too, 0 for none");
			}
		}
		return shares;
	}

	private static long micros(String property, Duration duration) {
		if (duration == null) {
			throw new PolicyValidationException(property, null, "must be set");
		}
		return duration.toNanos() / 1_000L;
	}

	/**
	 * Checks that every distributed cap has the Redis backend it needs, which
	 * only the beans can tell.
	 * @param caps the bound caps
	 * @param distributedAvailable whether a distributed limiter exists
	 * @return the caps
	 */
	static List<LimitDefinition<ConcurrencyPolicy>> checkDistributed(List<LimitDefinition<ConcurrencyPolicy>> caps,
			boolean distributedAvailable) {
		for (LimitDefinition<ConcurrencyPolicy> definition : caps) {
			ConcurrencyPolicy cap = definition.limit();
			if (cap.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED && !distributedAvailable) {
				throw new RateLimitConfigurationException("Property rate-limit.concurrency." + cap.name()
						+ ".scope is distributed but the rate limiter has no Redis backend",
						"Set rate-limit.backend=redis, or use scope local.", null);
			}
		}
		return caps;
	}

}

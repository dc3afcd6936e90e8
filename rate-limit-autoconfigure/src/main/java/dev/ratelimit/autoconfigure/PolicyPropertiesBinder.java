package dev.ratelimit.autoconfigure;

import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Sets what only a rate-limit policy has from {@code rate-limit.policies.<name>};
 * {@link LimitPropertiesBinder#POLICIES} does the rest.
 */
final class PolicyPropertiesBinder {

	private PolicyPropertiesBinder() {
	}

	static void bind(RateLimitPolicy.Builder builder, RateLimitProperties.Policy source) {
		builder.algorithm(source.getAlgorithm())
			.missingKey(source.getMissingKey())
			.shadow(source.isShadow())
			.localInstances(source.getLocalInstances())
			.maxWaitMicros(source.getMaxWait().toNanos() / 1_000L)
			.prefetch(source.getPrefetch());
		if (source.getCapacity() == null) {
			throw new PolicyValidationException("capacity", null, "must be set to a positive number");
		}
		builder.capacity(source.getCapacity());
		if (source.getRefill() != null) {
			builder.refill(source.getRefill());
		}
		if (source.getWindow() != null) {
			builder.windowMicros(source.getWindow().toNanos() / 1_000L);
		}
	}

}

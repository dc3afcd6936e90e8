package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.key.KeyExpressions;

/**
 * Builds the named policies from {@code rate-limit.policies}, failing with the
 * exact property name on the first invalid value.
 */
final class PolicyPropertiesBinder {

	private PolicyPropertiesBinder() {
	}

	static List<RateLimitPolicy> bind(RateLimitProperties properties, KeyExpressions expressions) {
		List<RateLimitPolicy> policies = new ArrayList<>();
		for (Map.Entry<String, RateLimitProperties.Policy> entry : properties.getPolicies().entrySet()) {
			policies.add(bind(entry.getKey(), entry.getValue(), expressions));
		}
		return policies;
	}

	static RateLimitPolicy bind(String name, RateLimitProperties.Policy source, KeyExpressions expressions) {
		String prefix = "rate-limit.policies." + name + ".";
		RateLimitPolicy policy;
		try {
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name)
				.algorithm(source.getAlgorithm())
				.key(source.getKey())
				.failureMode(source.getFailureMode())
				.missingKey(source.getMissingKey())
				.shadow(source.isShadow())
				.visibility(source.getVisibility())
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
			policy = builder.build();
		}
		catch (PolicyValidationException ex) {
			throw InvalidProperty.of(prefix, ex);
		}
		InvalidProperty.checkKey(expressions, prefix + "key", policy.key());
		return policy;
	}

}

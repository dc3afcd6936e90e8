package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.key.KeyExpressions;

/**
 * Builds the concurrency caps from {@code rate-limit.concurrency}, failing
 * with the exact property name on the first invalid value.
 */
final class ConcurrencyPropertiesBinder {

	private ConcurrencyPropertiesBinder() {
	}

	static List<ConcurrencyPolicy> bind(RateLimitProperties properties, KeyExpressions expressions,
			boolean distributedAvailable) {
		List<ConcurrencyPolicy> policies = new ArrayList<>();
		for (Map.Entry<String, RateLimitProperties.ConcurrencyCap> entry : properties.getConcurrency().entrySet()) {
			ConcurrencyPolicy policy = bind(entry.getKey(), entry.getValue(), expressions);
			if (policy.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED && !distributedAvailable) {
				throw new RateLimitConfigurationException("Property rate-limit.concurrency." + policy.name()
						+ ".scope is distributed but the rate limiter has no Redis backend",
						"Set rate-limit.backend=redis, or use scope local.", null);
			}
			policies.add(policy);
		}
		return policies;
	}

	static ConcurrencyPolicy bind(String name, RateLimitProperties.ConcurrencyCap source,
			KeyExpressions expressions) {
		String prefix = "rate-limit.concurrency." + name + ".";
		ConcurrencyPolicy policy;
		try {
			if (source.getPermits() == null) {
				throw new PolicyValidationException("permits", null, "must be set to at least 1");
			}
			policy = ConcurrencyPolicy.builder(name)
				.permits(source.getPermits())
				.key(source.getKey())
				.maxWait(source.getMaxWait())
				.scope(source.getScope())
				.permitTtl(source.getPermitTtl())
				.rejection(source.getRejection())
				.failureMode(source.getFailureMode())
				.visibility(source.getVisibility())
				.build();
		}
		catch (PolicyValidationException ex) {
			throw InvalidProperty.of(prefix, ex);
		}
		InvalidProperty.checkKey(expressions, prefix + "key", policy.key());
		return policy;
	}

}

package dev.ratelimit.autoconfigure;

import java.util.List;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
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

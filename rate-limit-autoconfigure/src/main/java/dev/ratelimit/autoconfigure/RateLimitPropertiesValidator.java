package dev.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.key.KeyExpressions;

/**
 * The one check of every {@code rate-limit.*} property, run once when the
 * properties are bound and before any bean uses them. Each problem names its
 * property and value; all of them are reported together.
 * <p>
 * Malformed refill rates, budget windows, time zones and amounts never get
 * here: they fail binding itself, reported by Boot with the property's name.
 * What is checked here is what binding cannot see: ranges, required values,
 * combinations (a limit is checked by building it), key expressions and route
 * rules. Every setting is checked whichever backend is chosen, so that a
 * profile switching to Redis finds no surprise. What depends on beans rather
 * than on values (a distributed cap without a Redis backend, a name used by two
 * kinds of limit, which {@link dev.ratelimit.LimitRegistry} refuses) is
 * checked where the beans are built.
 */
final class RateLimitPropertiesValidator {

	/** Parses key expressions; evaluation, which needs the application's beans, happens later. */
	private final KeyExpressions expressions = new KeyExpressions(null);

	private final List<RateLimitConfigurationException> problems = new ArrayList<>();

	private RateLimitPropertiesValidator() {
	}

	/**
	 * Checks every property.
	 * @param properties the bound properties
	 * @throws RateLimitConfigurationException naming every invalid property
	 */
	static void validate(RateLimitProperties properties) {
		RateLimitPropertiesValidator validator = new RateLimitPropertiesValidator();
		validator.keys(properties);
		validator.check(() -> ClientIpPropertiesBinder.bind(properties.getClientIp()));
		validator.limits(properties);
		validator.routes(properties);
		validator.memory(properties.getMemory());
		validator.redis(properties.getRedis());
		validator.notNegative("rate-limit.unavailable-retry-after", properties.getUnavailableRetryAfter());
		if (!validator.problems.isEmpty()) {
			throw InvalidProperty.all(validator.problems);
		}
	}

	private void keys(RateLimitProperties properties) {
		check(() -> {
			try {
				new LimitKeys(properties.getKeyPrefix(), LimitKeys.DEFAULT_MAX_LENGTH);
			}
			catch (IllegalArgumentException ex) {
				throw InvalidProperty.of("rate-limit.key-prefix", properties.getKeyPrefix(),
						"use a non-empty prefix without braces, spaces or control characters, such as rl", ex);
			}
		});
		if (properties.getMaxKeyLength() < 16) {
			invalid("rate-limit.max-key-length", properties.getMaxKeyLength(), "must be at least 16");
		}
	}

	private void limits(RateLimitProperties properties) {
		// Each limit is checked by building it: the builders hold the rules of their kind.
		limits(LimitPropertiesBinder.POLICIES, properties.getPolicies());
		limits(LimitPropertiesBinder.BUDGETS, properties.getBudgets());
		limits(LimitPropertiesBinder.CONCURRENCY, properties.getConcurrency());
	}

	private <S extends RateLimitProperties.LimitProperties> void limits(LimitPropertiesBinder<S, ?, ?> binder,
			Map<String, S> sources) {
		sources.forEach((name, source) -> check(() -> binder.bind(name, source, this.expressions)));
	}

	private void routes(RateLimitProperties properties) {
		List<RateLimitProperties.Route> routes = properties.getRoutes();
		for (int i = 0; i < routes.size(); i++) {
			int index = i;
			check(() -> RouteRulesBinder.check(index, routes.get(index), properties.getPolicies().keySet()));
		}
	}

	private void memory(RateLimitProperties.Memory memory) {
		// The in-memory stores exist with every backend: with Redis they are the local fallbacks.
		positive("rate-limit.memory.max-keys", memory.getMaxKeys());
		positive("rate-limit.memory.max-budget-keys", memory.getMaxBudgetKeys());
	}

	private void redis(RateLimitProperties.Redis redis) {
		positive("rate-limit.redis.timeout", redis.getTimeout());
		positive("rate-limit.redis.connect-timeout", redis.getConnectTimeout());
		positive("rate-limit.redis.overrides-poll-interval", redis.getOverridesPollInterval());
		positive("rate-limit.redis.deny-cache.max-keys", redis.getDenyCache().getMaxKeys());
		positive("rate-limit.redis.prefetch.max-keys", redis.getPrefetch().getMaxKeys());
		RateLimitProperties.CircuitBreaker breaker = redis.getCircuitBreaker();
		String prefix = "rate-limit.redis.circuit-breaker.";
		float threshold = breaker.getFailureRateThreshold();
		if (!(threshold > 0 && threshold <= 100)) {
			invalid(prefix + "failure-rate-threshold", threshold, "must be a percentage above 0 and at most 100");
		}
		positive(prefix + "sliding-window-size", breaker.getSlidingWindowSize());
		positive(prefix + "minimum-number-of-calls", breaker.getMinimumNumberOfCalls());
		if (breaker.getWaitDurationInOpenState().toMillis() < 1) {
			invalid(prefix + "wait-duration-in-open-state", breaker.getWaitDurationInOpenState(),
					"must be at least 1ms");
		}
		positive(prefix + "permitted-number-of-calls-in-half-open-state",
				breaker.getPermittedNumberOfCallsInHalfOpenState());
	}

	private void positive(String property, long value) {
		if (value <= 0) {
			invalid(property, value, "must be positive");
		}
	}

	private void positive(String property, Duration value) {
		if (value.isNegative() || value.isZero()) {
			invalid(property, value, "must be positive");
		}
	}

	private void notNegative(String property, Duration value) {
		if (value.isNegative()) {
			invalid(property, value, "must not be negative");
		}
	}

	private void invalid(String property, Object value, String reason) {
		this.problems.add(InvalidProperty.of(property, value, reason, null));
	}

	private void check(Runnable check) {
		try {
			check.run();
		}
		catch (RateLimitConfigurationException ex) {
			this.problems.add(ex);
		}
	}

}

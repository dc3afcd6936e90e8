package dev.ratelimit.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

import dev.ratelimit.core.KeyBound;
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
	 * Checks every property. Each check catches its own problem in place, without
	 * a lambda per check: this runs at every start, and each lambda is a class
	 * spun then.
	 * @param properties the bound properties
	 * @throws RateLimitConfigurationException naming every invalid property
	 */
	static void validate(RateLimitProperties properties) {
		RateLimitPropertiesValidator validator = new RateLimitPropertiesValidator();
		validator.keys(properties);
		try {
			ClientIpPropertiesBinder.bind(properties.getClientIp());
		}
		catch (RateLimitConfigurationException ex) {
			validator.problems.add(ex);
		}
		validator.limits(properties);
		validator.routes(properties);
		validator.memory(properties.getMemory());
		validator.heavyHitters(properties.getHeavyHitters());
		validator.redis(properties.getRedis());
		validator.metrics(properties.getMetrics());
		for (Map.Entry<String, RateLimitProperties.Client> client : properties.getClients().entrySet()) {
			validator.client(properties, client.getKey(), client.getValue());
		}
		validator.notNegative("rate-limit.unavailable-retry-after", properties.getUnavailableRetryAfter());
		if (!validator.problems.isEmpty()) {
			throw InvalidProperty.all(validator.problems);
		}
	}

	private void keys(RateLimitProperties properties) {
		try {
			new LimitKeys(properties.getKeyPrefix(), LimitKeys.DEFAULT_MAX_LENGTH);
		}
		catch (IllegalArgumentException ex) {
			this.problems.add(InvalidProperty.of("rate-limit.key-prefix", properties.getKeyPrefix(),
					"use a non-empty prefix without braces, spaces or control characters, such as rl", ex));
		}
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
		for (Map.Entry<String, S> source : sources.entrySet()) {
			try {
				binder.bind(source.getKey(), source.getValue(), this.expressions);
			}
			catch (RateLimitConfigurationException ex) {
				this.problems.add(ex);
			}
		}
	}

	private void routes(RateLimitProperties properties) {
		List<RateLimitProperties.Route> routes = properties.getRoutes();
		for (int i = 0; i < routes.size(); i++) {
			try {
				RouteRulesBinder.check(i, routes.get(i), properties.getPolicies().keySet(),
						properties.getConcurrency().keySet());
			}
			catch (RateLimitConfigurationException ex) {
				this.problems.add(ex);
			}
		}
	}

	private void memory(RateLimitProperties.Memory memory) {
		// The in-memory stores exist with every backend: with Redis they are the local fallbacks.
		positive("rate-limit.memory.max-keys", memory.getMaxKeys());
		positive("rate-limit.memory.max-budget-keys", memory.getMaxBudgetKeys());
		if (memory.getOverflowSlots() < 1 || memory.getOverflowSlots() > KeyBound.MAX_OVERFLOW_SLOTS) {
			invalid("rate-limit.memory.overflow-slots", memory.getOverflowSlots(),
					"must be between 1 and " + KeyBound.MAX_OVERFLOW_SLOTS);
		}
	}

	private void heavyHitters(RateLimitProperties.HeavyHitters heavyHitters) {
		int tracked = heavyHitters.getTrackedKeys();
		if (tracked < 8 || tracked > 4096) {
			invalid("rate-limit.heavy-hitters.tracked-keys", tracked, "must be between 8 and 4096");
		}
		if (heavyHitters.getListed() < 1 || heavyHitters.getListed() > tracked) {
			invalid("rate-limit.heavy-hitters.listed", heavyHitters.getListed(),
					"must be between 1 and rate-limit.heavy-hitters.tracked-keys (" + tracked + ")");
		}
		atLeastASecond("rate-limit.heavy-hitters.window", heavyHitters.getWindow());
		atLeastASecond("rate-limit.heavy-hitters.publish-interval", heavyHitters.getPublishInterval());
	}

	private void atLeastASecond(String property, Duration value) {
		if (value == null || value.compareTo(Duration.ofSeconds(1)) < 0) {
			invalid(property, value, "must be at least 1s");
		}
	}

	private void redis(RateLimitProperties.Redis redis) {
		positive("rate-limit.redis.timeout", redis.getTimeout());
		positive("rate-limit.redis.connect-timeout", redis.getConnectTimeout());
		positive("rate-limit.redis.busy-timeout", redis.getBusyTimeout());
		if (redis.getBusyTimeout().compareTo(redis.getTimeout()) < 0) {
			invalid("rate-limit.redis.busy-timeout", redis.getBusyTimeout(),
					"must be at least rate-limit.redis.timeout (" + redis.getTimeout() + "): a call waits the "
							+ "busy timeout in all, of which Redis may stay silent the timeout");
		}
		positive("rate-limit.redis.overrides-poll-interval", redis.getOverridesPollInterval());
		positive("rate-limit.redis.topology-refresh-period", redis.getTopologyRefreshPeriod());
		RateLimitProperties.Durability durability = redis.getDurability();
		if (durability.getReplicas() < 1 || durability.getReplicas() > 16) {
			invalid("rate-limit.redis.durability.replicas", durability.getReplicas(), "must be between 1 and 16");
		}
		positive("rate-limit.redis.durability.timeout", durability.getTimeout());
		positive("rate-limit.redis.deny-cache.max-keys", redis.getDenyCache().getMaxKeys());
		positive("rate-limit.redis.prefetch.max-keys", redis.getPrefetch().getMaxKeys());
	}

	private void metrics(RateLimitProperties.Metrics metrics) {
		if (metrics.getNearLimit() < 1 || metrics.getNearLimit() > 99) {
			invalid("rate-limit.metrics.near-limit", metrics.getNearLimit(),
					"must be between 1 and 99: the percent of a key's allowance used beyond which an allowed "
							+ "decision counts as near the limit, such as 80");
		}
	}

	private void client(RateLimitProperties properties, String name, RateLimitProperties.Client client) {
		String prefix = "rate-limit.clients." + name + ".";
		if (!ClientPropertiesBinder.NAME.matcher(name).matches()) {
			invalid("rate-limit.clients." + name, name, "a client's name is 1 to 64 letters, digits, '.', '_' or '-', "
					+ "starting with a letter or digit");
		}
		URI baseUrl = client.getBaseUrl();
		if (baseUrl != null && (baseUrl.getHost() == null || baseUrl.getScheme() == null
				|| !baseUrl.getScheme().toLowerCase(Locale.ROOT).matches("https?") || baseUrl.getQuery() != null
				|| baseUrl.getFragment() != null)) {
			invalid(prefix + "base-url", baseUrl, "must be an absolute http or https URL without query or fragment, "
					+ "such as https://api.example.com/v1");
		}
		String rateLimit = client.getRateLimit();
		if (rateLimit != null) {
			RateLimitProperties.Policy policy = properties.getPolicies().get(rateLimit);
			if (policy == null) {
				invalid(prefix + "rate-limit", rateLimit,
						"no rate-limit policy of that name (configured: " + properties.getPolicies().keySet() + ")");
			}
			else if (policy.getMaxWait() == null || policy.getMaxWait().isZero() || policy.getMaxWait().isNegative()) {
				invalid(prefix + "rate-limit", rateLimit, "the client waits for its turn: give the policy a wait, "
						+ "rate-limit.policies." + rateLimit + ".max-wait (such as 2s)");
			}
		}
		String cap = client.getConcurrency();
		if (cap != null && !properties.getConcurrency().containsKey(cap)) {
			invalid(prefix + "concurrency", cap,
					"no concurrency cap of that name (configured: " + properties.getConcurrency().keySet() + ")");
		}
		else if (cap != null && Objects.requireNonNull(properties.getConcurrency().get(cap), "a configured cap")
			.getAdaptive()
			.getAlgorithm() != null) {
			// Its estimate needs each call's ending, which a provider's response does not give the cap yet.
			invalid(prefix + "concurrency", cap, "is an adaptive cap, which protects calls into this service "
					+ "(a route rule or an annotated method); give the client a cap of fixed permits");
		}
		positive(prefix + "max-attempts", client.getMaxAttempts());
		positive(prefix + "backoff", client.getBackoff());
		positive(prefix + "deadline", client.getDeadline());
		notNegative(prefix + "pause-jitter", client.getPauseJitter());
		if (client.getMaxBackoff().compareTo(client.getBackoff()) < 0) {
			invalid(prefix + "max-backoff", client.getMaxBackoff(),
					"must be at least " + prefix + "backoff (" + client.getBackoff().toMillis() + "ms)");
		}
		for (String method : client.getRetryMethods()) {
			if (method == null || !method.matches("[A-Za-z]{1,20}")) {
				invalid(prefix + "retry-methods", client.getRetryMethods(),
						"each entry is an HTTP method, such as GET or PUT");
				break;
			}
		}
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

}

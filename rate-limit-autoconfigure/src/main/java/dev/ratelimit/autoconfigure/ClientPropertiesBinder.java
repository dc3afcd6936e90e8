package dev.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;

import org.springframework.http.HttpMethod;

import dev.ratelimit.client.ClientSettings;

/**
 * Turns the properties of a provider client into its settings. The values were
 * checked, with their property's name, when the properties were bound.
 */
final class ClientPropertiesBinder {

	/** A client's name: what a limit's name may be, so that it can stand in a key's hash tag and a metric tag. */
	static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

	private ClientPropertiesBinder() {
	}

	static ClientSettings bind(String name, RateLimitProperties.Client client) {
		Set<String> methods = new HashSet<>(client.getRetryMethods());
		if (client.isRetryNonIdempotent()) {
			for (HttpMethod method : HttpMethod.values()) {
				methods.add(method.name());
			}
		}
		return new ClientSettings(name, client.getBaseUrl(), client.getRateLimit(), client.getConcurrency(),
				client.getMaxAttempts(), micros(client.getBackoff()), micros(client.getMaxBackoff()),
				micros(client.getDeadline()), methods, micros(client.getPauseJitter()));
	}

	private static long micros(Duration duration) {
		return duration.toNanos() / 1_000L;
	}

}

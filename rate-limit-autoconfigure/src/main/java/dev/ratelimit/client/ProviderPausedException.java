package dev.ratelimit.client;

import dev.ratelimit.core.RateLimitException;

/**
 * Thrown when a provider asked to be left alone for longer than a call's
 * deadline allows: the call fails at once instead of waiting for nothing.
 * Answered as 503 with {@code Retry-After} in web applications, as capacity
 * temporarily reduced, without the provider's name.
 * <p>
 * {@link ProviderClient#refusal()} describes the same way a call the
 * provider's own 429 or 503 ended, for an application to answer it like this
 * one.
 */
public class ProviderPausedException extends RateLimitException {

	private final String client;

	private final long retryAfterMicros;

	/**
	 * Creates an exception.
	 * @param client the provider's name
	 * @param retryAfterMicros how long the provider is still paused
	 * @param deadlineMicros the time the call had left
	 */
	public ProviderPausedException(String client, long retryAfterMicros, long deadlineMicros) {
		super("Provider '" + client + "' is paused for " + retryAfterMicros / 1000 + " ms more, past the call's deadline"
				+ " (" + Math.max(0, deadlineMicros) / 1000 + " ms left)", null);
		this.client = client;
		this.retryAfterMicros = retryAfterMicros;
	}

	/**
	 * Creates an exception for a call the provider's refusal ended.
	 * @param client the provider's name
	 * @param retryAfterMicros how long the provider is still paused, zero when it asked for no pause
	 */
	public ProviderPausedException(String client, long retryAfterMicros) {
		super("Provider '" + client + "' refused the call; paused for " + retryAfterMicros / 1000 + " ms more", null);
		this.client = client;
		this.retryAfterMicros = retryAfterMicros;
	}

	/** @return the provider's name */
	public String getClient() {
		return this.client;
	}

	/** @return how long the provider is still paused, in microseconds */
	public long getRetryAfterMicros() {
		return this.retryAfterMicros;
	}

}

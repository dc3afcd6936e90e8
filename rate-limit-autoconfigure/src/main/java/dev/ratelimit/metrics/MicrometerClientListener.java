package dev.ratelimit.metrics;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.ratelimit.client.ClientListener;

/**
 * Metrics of the provider clients: {@code rate.limit.client.attempts} (client,
 * outcome), {@code rate.limit.client.retries} (client, cause),
 * {@code rate.limit.client.wait} (client, reason) and
 * {@code rate.limit.client.pauses} (client, source). Every tag value comes from
 * a small fixed set. The registry is looked up on each event, so nothing is
 * counted without one.
 */
public final class MicrometerClientListener implements ClientListener {

	private final Supplier<MeterRegistry> registry;

	/**
	 * Creates the listener.
	 * @param registry the registry, or a supplier of {@code null} when there is none
	 */
	public MicrometerClientListener(Supplier<MeterRegistry> registry) {
		this.registry = registry;
	}

	@Override
	public void attempted(String client, String outcome) {
		MeterRegistry meters = this.registry.get();
		if (meters != null) {
			Counter.builder("rate.limit.client.attempts")
				.description("Attempts of calls to a provider, by outcome")
				.tag("client", client)
				.tag("outcome", outcome)
				.register(meters)
				.increment();
		}
	}

	@Override
	public void retrying(String client, String cause) {
		MeterRegistry meters = this.registry.get();
		if (meters != null) {
			Counter.builder("rate.limit.client.retries")
				.description("Calls to a provider tried again, by what the previous attempt met")
				.tag("client", client)
				.tag("cause", cause)
				.register(meters)
				.increment();
		}
	}

	@Override
	public void waited(String client, String reason, long micros) {
		MeterRegistry meters = this.registry.get();
		if (meters != null) {
			Timer.builder("rate.limit.client.wait")
				.description("Time calls to a provider waited before an attempt: a retry's backoff or the "
						+ "provider's pause")
				.tag("client", client)
				.tag("reason", reason)
				.register(meters)
				.record(micros, TimeUnit.MICROSECONDS);
		}
	}

	@Override
	public void paused(String client, String source, long micros) {
		MeterRegistry meters = this.registry.get();
		if (meters != null) {
			Counter.builder("rate.limit.client.pauses")
				.description("Pauses a provider asked for, with Retry-After or a quota reported exhausted")
				.tag("client", client)
				.tag("source", source)
				.register(meters)
				.increment();
		}
	}

}

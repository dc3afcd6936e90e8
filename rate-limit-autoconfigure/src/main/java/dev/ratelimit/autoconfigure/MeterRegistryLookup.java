package dev.ratelimit.autoconfigure;

import java.util.function.Supplier;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;

/**
 * The application's {@link MeterRegistry}, looked up in the bean factory until
 * every singleton exists and remembered from then on, found or not.
 * <p>
 * The limiter's listener exists before the registry does, so it cannot be
 * handed one; but once the context is up, asking the bean factory on every
 * decision (which an application without a registry would otherwise do) costs
 * more than the decision itself.
 */
final class MeterRegistryLookup implements Supplier<MeterRegistry> {

	private final ObjectProvider<MeterRegistry> registry;

	private volatile boolean settled;

	private volatile MeterRegistry resolved;

	MeterRegistryLookup(ObjectProvider<MeterRegistry> registry) {
		this.registry = registry;
	}

	@Override
	public MeterRegistry get() {
		if (this.settled) {
			return this.resolved;
		}
		MeterRegistry found = this.registry.getIfUnique();
		if (found != null) {
			this.resolved = found;
			this.settled = true;
		}
		return found;
	}

	/**
	 * Looks the registry up one last time and keeps the answer: called once
	 * every singleton, the registry among them, exists.
	 */
	void settle() {
		this.resolved = this.registry.getIfUnique();
		this.settled = true;
	}

}

package dev.ratelimit.core;

import org.jspecify.annotations.Nullable;

/**
 * A decision together with what it took, for
 * {@link RateLimitBackend#giveBack}: the outcome of
 * {@link RateLimitBackend#tryTakeAll} for one acquisition.
 *
 * @param decision the decision
 * @param receipt what names the units taken (the window or entry they were
 * counted in), opaque to everyone but the backend that took them; {@code null}
 * when nothing was taken
 */
public record Take(Decision decision, @Nullable String receipt) {

	/** @return whether the decision took units that can be given back */
	public boolean tookUnits() {
		return this.receipt != null;
	}

}

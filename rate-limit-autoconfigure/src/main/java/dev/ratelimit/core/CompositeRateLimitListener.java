package dev.ratelimit.core;

import java.util.List;

/**
 * Passes every event to several listeners, in order.
 */
public final class CompositeRateLimitListener implements RateLimitListener {

	private final List<RateLimitListener> listeners;

	/**
	 * Creates a composite.
	 * @param listeners the listeners
	 */
	public CompositeRateLimitListener(List<RateLimitListener> listeners) {
		this.listeners = List.copyOf(listeners);
	}

	@Override
	public void decided(RateLimitPolicy policy, Decision decision, DecisionSource source) {
		for (RateLimitListener listener : this.listeners) {
			listener.decided(policy, decision, source);
		}
	}

	@Override
	public void failedOver(RateLimitPolicy policy, FailureMode mode, RuntimeException cause) {
		for (RateLimitListener listener : this.listeners) {
			listener.failedOver(policy, mode, cause);
		}
	}

	@Override
	public void backendCalled(long nanos, boolean succeeded) {
		for (RateLimitListener listener : this.listeners) {
			listener.backendCalled(nanos, succeeded);
		}
	}

	@Override
	public void backendAvailabilityChanged(boolean available, RuntimeException cause) {
		for (RateLimitListener listener : this.listeners) {
			listener.backendAvailabilityChanged(available, cause);
		}
	}

}

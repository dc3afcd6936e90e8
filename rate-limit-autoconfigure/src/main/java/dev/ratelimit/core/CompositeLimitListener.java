package dev.ratelimit.core;

import java.lang.reflect.Method;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Passes every event to several listeners, in order. The listeners are kept
 * in an array: a loop over a list allocates an iterator on every decision
 * unless the JIT removes it, which it stops doing once code elsewhere in the
 * process has made the list's iterator calls megamorphic (seen: 32 bytes per
 * admitted decision after a test run that exercised failovers).
 */
final class CompositeLimitListener implements LimitListener {

	private final LimitListener[] listeners;

	CompositeLimitListener(List<LimitListener> listeners) {
		this.listeners = listeners.toArray(new LimitListener[0]);
	}

	@Override
	public void decided(Limit limit, boolean allowed, DecisionSource source) {
		for (LimitListener listener : this.listeners) {
			listener.decided(limit, allowed, source);
		}
	}

	@Override
	public void decided(Limit limit, @Nullable String key, long units, boolean allowed, long remaining,
			long capacity, DecisionSource source) {
		for (LimitListener listener : this.listeners) {
			listener.decided(limit, key, units, allowed, remaining, capacity, source);
		}
	}

	@Override
	public void fellBack(Limit limit, FailureMode mode, RuntimeException cause) {
		for (LimitListener listener : this.listeners) {
			listener.fellBack(limit, mode, cause);
		}
	}

	@Override
	public void storeAvailabilityChanged(LimitKind kind, boolean available, @Nullable RuntimeException cause) {
		for (LimitListener listener : this.listeners) {
			listener.storeAvailabilityChanged(kind, available, cause);
		}
	}

	@Override
	public void storePartAvailabilityChanged(LimitKind kind, String part, boolean available,
			@Nullable RuntimeException cause) {
		for (LimitListener listener : this.listeners) {
			listener.storePartAvailabilityChanged(kind, part, available, cause);
		}
	}

	@Override
	public void storeCalled(LimitKind kind, long nanos, boolean succeeded) {
		for (LimitListener listener : this.listeners) {
			listener.storeCalled(kind, nanos, succeeded);
		}
	}

	@Override
	public void planDefaulted(Limit limit, boolean unknown) {
		for (LimitListener listener : this.listeners) {
			listener.planDefaulted(limit, unknown);
		}
	}

	@Override
	public void charged(Limit budget, long amountMicros) {
		for (LimitListener listener : this.listeners) {
			listener.charged(budget, amountMicros);
		}
	}

	@Override
	public void fallbackCalled(Method method, RateLimitException refusal) {
		for (LimitListener listener : this.listeners) {
			listener.fallbackCalled(method, refusal);
		}
	}

	@Override
	public void gaveBack(Limit limit, boolean succeeded) {
		for (LimitListener listener : this.listeners) {
			listener.gaveBack(limit, succeeded);
		}
	}

	@Override
	public void shed(Limit cap, String priority, boolean shadow) {
		for (LimitListener listener : this.listeners) {
			listener.shed(cap, priority, shadow);
		}
	}

}

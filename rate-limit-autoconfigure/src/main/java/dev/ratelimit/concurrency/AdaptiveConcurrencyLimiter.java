package dev.ratelimit.concurrency;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.DoubleSupplier;
import java.util.function.IntSupplier;

import com.netflix.concurrency.limits.Limiter.Listener;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.LimitListener.DecisionSource;
import dev.ratelimit.core.TimeSource;

/**
 * Caps calls in flight in this instance at a limit that follows the service's
 * latency: one {@link PriorityLimiter} per adaptive cap, on Netflix
 * concurrency-limits' algorithms ({@link AdaptiveLimit}), shedding the lowest
 * {@link Priority} first ({@link Shedding}). The caller's key is the value of
 * the cap's priority expression.
 * <p>
 * Never waits: a call is admitted or shed at once, so it decides inline on
 * any thread, an event loop's too. A shed call feeds nothing to the estimate;
 * a call that ran tells it, when its permit is released, how long it took and
 * whether it failed or outlived the cap's timeout (both drops). A shadow cap
 * admits the calls it would shed, counting them as shadow decisions.
 * <p>
 * A cap whose settings change (a refresh) starts again from its initial
 * limit; permits of the old one go back to it.
 */
public final class AdaptiveConcurrencyLimiter implements ConcurrencyLimiter {

	private final TimeSource time;

	private final DoubleSupplier jitter;

	private final LimitListener listener;

	private final Map<String, Cap> caps = new ConcurrentHashMap<>();

	private volatile BiConsumer<String, IntSupplier> newCapObserver = (name, limit) -> {
	};

	/**
	 * Creates a limiter.
	 * @param time the clock that times calls
	 * @param jitter uniform random numbers in [0, 1) that spread the waits told to shed calls
	 * @param listener hears shed calls
	 */
	public AdaptiveConcurrencyLimiter(TimeSource time, DoubleSupplier jitter, LimitListener listener) {
		this.time = time;
		this.jitter = jitter;
		this.listener = listener;
	}

	@Override
	public Permit acquire(ConcurrencyPolicy policy, @Nullable String key) {
		AdaptiveLimit adaptive = adaptiveOf(policy);
		Shedding shedding = policy.shedding();
		PriorityLimiter limiter = limiterOf(policy, adaptive, shedding);
		Priority priority = shedding.priorityOf(key);
		Optional<Listener> admitted = limiter.acquire(priority);
		Listener listener;
		if (admitted.isPresent()) {
			listener = admitted.get();
		}
		else {
			this.listener.shed(policy, priority.label(), policy.shadow());
			if (!policy.shadow()) {
				throw new LoadShedException(policy, priority, limiter.limit(),
						shedding.retryAfterMicros(this.jitter.getAsDouble()));
			}
			this.listener.decided(policy, key, 1, false, -1, -1, DecisionSource.SHADOW);
			listener = limiter.admit(priority);
		}
		return new AdaptivePermit(listener, this.time, adaptive.timeoutMicros());
	}

	/** @return {@code false}: an adaptive cap admits or sheds at once, in memory */
	@Override
	public boolean mayBlock(ConcurrencyPolicy policy) {
		return false;
	}

	/**
	 * Returns an adaptive cap's limit now.
	 * @param policy the cap's name
	 * @return its limit, or empty before its first call
	 */
	public OptionalInt limit(String policy) {
		Cap cap = this.caps.get(policy);
		return (cap != null) ? OptionalInt.of(cap.limiter.limit()) : OptionalInt.empty();
	}

	/**
	 * Returns an adaptive cap's calls in flight of one class.
	 * @param policy the cap's name
	 * @param priority the class
	 * @return the calls in flight, 0 before the cap's first call
	 */
	public int inFlight(String policy, Priority priority) {
		Cap cap = this.caps.get(policy);
		return (cap != null) ? cap.limiter.inFlight(priority) : 0;
	}

	/**
	 * Sets what to call the first time an adaptive cap decides, with a live
	 * reading of its limit, for metrics.
	 * @param observer receives the cap's name and its limit
	 */
	public void onNewCap(BiConsumer<String, IntSupplier> observer) {
		this.newCapObserver = observer;
		this.caps.keySet().forEach((name) -> observer.accept(name, limitOf(name)));
	}

	private IntSupplier limitOf(String name) {
		return () -> limit(name).orElse(0);
	}

	private static AdaptiveLimit adaptiveOf(ConcurrencyPolicy policy) {
		AdaptiveLimit adaptive = policy.adaptive();
		if (adaptive == null) {
			throw new IllegalArgumentException("Concurrency policy '" + policy.name() + "' is not adaptive");
		}
		return adaptive;
	}

	private PriorityLimiter limiterOf(ConcurrencyPolicy policy, AdaptiveLimit adaptive, Shedding shedding) {
		Cap cap = this.caps.get(policy.name());
		if (cap != null && cap.fits(adaptive, shedding)) {
			return cap.limiter;
		}
		boolean[] created = new boolean[1];
		cap = this.caps.compute(policy.name(), (name, old) -> {
			if (old != null && old.fits(adaptive, shedding)) {
				return old;
			}
			created[0] = (old == null);
			return new Cap(adaptive, shedding,
					new PriorityLimiter(name, adaptive, shedding, () -> this.time.currentTimeMicros() * 1_000L));
		});
		if (created[0]) {
			this.newCapObserver.accept(policy.name(), limitOf(policy.name()));
		}
		return cap.limiter;
	}

	/** One cap's limiter and the settings it was built with. */
	private record Cap(AdaptiveLimit adaptive, Shedding shedding, PriorityLimiter limiter) {

		boolean fits(AdaptiveLimit adaptive, Shedding shedding) {
			return this.adaptive.equals(adaptive) && this.shedding.equals(shedding);
		}

	}

	/**
	 * A permit of an adaptive cap: tells the estimate, once, how its call ended;
	 * a call that outlived the cap's timeout counts as a drop however it ended.
	 */
	private static final class AdaptivePermit extends OncePermit {

		private final Listener listener;

		private final TimeSource time;

		private final long startMicros;

		private final long timeoutMicros;

		AdaptivePermit(Listener listener, TimeSource time, long timeoutMicros) {
			this.listener = listener;
			this.time = time;
			this.startMicros = time.currentTimeMicros();
			this.timeoutMicros = timeoutMicros;
		}

		@Override
		protected void released(Ending ending) {
			boolean late = this.timeoutMicros > 0 && this.time.currentTimeMicros() - this.startMicros > this.timeoutMicros;
			if (late || ending == Ending.FAILED) {
				this.listener.onDropped();
			}
			else if (ending == Ending.ABANDONED) {
				this.listener.onIgnore();
			}
			else {
				this.listener.onSuccess();
			}
		}

	}

}

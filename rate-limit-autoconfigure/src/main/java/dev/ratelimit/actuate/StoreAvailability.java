package dev.ratelimit.actuate;

import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopInfrastructureBean;

import dev.ratelimit.core.Causes;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.TimeSource;

/**
 * Whether the stores of each kind of limit answer, as the limiter's own calls
 * find them: a listener, so that health sees what the calls see. A {@code PING}
 * alone misses a Redis that answers {@code PING} but refuses the limiter's
 * scripts: an ACL without {@code EVALSHA}, a read-only replica after a
 * failover, a proxy that does not pass scripts.
 * <p>
 * A store counts as failing from the call that found it failing until a later
 * call finds it answering, and for at most {@link #RECENT} after the last
 * failed call: without traffic nothing would ever clear it, and a health check
 * that stays down for want of calls can keep an instance out of rotation for
 * good. For the same reason, when the health check itself saw Redis out of
 * reach and then answering again, the failures the calls met until then
 * belonged to that outage and no longer count. Cheap on the request thread: an
 * answered call only reads a flag, unless the store was failing.
 */
final class StoreAvailability implements LimitListener, AopInfrastructureBean {

	/** How long a failure the calls found counts without a later failed call. */
	static final Duration RECENT = Duration.ofMinutes(1);

	private final TimeSource time;

	private final Map<LimitKind, KindState> kinds = new EnumMap<>(LimitKind.class);

	private volatile boolean unreachableSeen;

	private volatile long outageEndedMicros = Long.MIN_VALUE;

	StoreAvailability(TimeSource time) {
		this.time = time;
		for (LimitKind kind : LimitKind.values()) {
			this.kinds.put(kind, new KindState());
		}
	}

	@Override
	public void storeAvailabilityChanged(LimitKind kind, boolean available, @Nullable RuntimeException cause) {
		KindState state = state(kind);
		if (available) {
			state.failing = false;
		}
		else {
			state.cause = (cause != null) ? Causes.describe(cause) : "failed";
			state.lastFailureMicros = this.time.currentTimeMicros();
			state.failing = true;
		}
	}

	@Override
	public void storePartAvailabilityChanged(LimitKind kind, String part, boolean available,
			@Nullable RuntimeException cause) {
		if (part.isEmpty()) {
			return;
		}
		KindState state = state(kind);
		if (available) {
			state.parts.remove(part);
		}
		else {
			state.parts.put(part, (cause != null) ? Causes.describe(cause) : "failed");
		}
	}

	/** Every kind has its state from the start. */
	private KindState state(LimitKind kind) {
		return Objects.requireNonNull(this.kinds.get(kind), "every kind has a state");
	}

	@Override
	public void storeCalled(LimitKind kind, long nanos, boolean succeeded) {
		KindState state = state(kind);
		if (succeeded) {
			// A call on one part of a Cluster says nothing of another part that fails.
			if (state.failing && state.parts.isEmpty()) {
				state.failing = false;
			}
		}
		else {
			state.lastFailureMicros = this.time.currentTimeMicros();
			state.failing = true;
		}
	}

	/**
	 * Records that the health check found Redis out of reach.
	 */
	void unreachable() {
		this.unreachableSeen = true;
	}

	/**
	 * Records that the health check found Redis answering: if it had found it out
	 * of reach, that outage is over, and with it the failures the calls met
	 * during it.
	 */
	void reachable() {
		if (this.unreachableSeen) {
			this.outageEndedMicros = this.time.currentTimeMicros();
			this.unreachableSeen = false;
		}
	}

	/**
	 * Returns the stores failing now, as the calls found them: the first failure
	 * of each by kind, in the order of the kinds.
	 * @return the failures by kind, empty when every store answers
	 */
	Map<LimitKind, String> failing() {
		long now = this.time.currentTimeMicros();
		Map<LimitKind, String> failing = new LinkedHashMap<>();
		this.kinds.forEach((kind, state) -> {
			long last = state.lastFailureMicros;
			if (state.failing && last > this.outageEndedMicros && now - last <= RECENT.toNanos() / 1000) {
				failing.put(kind, state.describe());
			}
		});
		return failing;
	}

	/**
	 * The last word of the calls about one kind's store. Fields are written by
	 * request threads without a lock: health reads a snapshot that may be one
	 * call old, which is all it claims.
	 */
	private static final class KindState {

		volatile boolean failing;

		volatile long lastFailureMicros;

		volatile String cause = "the limiter's calls to it fail";

		/** The parts failing (a Cluster's masters), with why: empty for a store of one part. */
		final Map<String, String> parts = new ConcurrentHashMap<>();

		/** The failure, naming the parts that fail when the store has several. */
		String describe() {
			if (this.parts.isEmpty()) {
				return this.cause;
			}
			StringBuilder text = new StringBuilder();
			this.parts.forEach((part, why) -> text.append((text.length() > 0) ? "; " : "")
				.append("on ")
				.append(part)
				.append(": ")
				.append(why));
			return text.toString();
		}

	}

}

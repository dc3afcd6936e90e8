package dev.ratelimit.insight;

import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.PerLimit;

/**
 * Each limit's heaviest keys on this instance: the keys refused most and the
 * keys that consumed most units over a recent window, in fixed memory per
 * limit whatever the number of keys ({@link TopKeys}). It hears every
 * decision of every kind through the {@link LimitListener} event that carries
 * the key: an enforced decision counts (a shadow policy's would-be refusals do
 * not), a call without a key does not.
 * <p>
 * Recording a decision is a map look-up by the limit's name, a short monitor,
 * a probe of an open-addressing table and an add: it allocates nothing once a
 * limit has been seen, whatever the key.
 */
public final class HeavyHitters implements LimitListener, FleetShared {

	/** The topic of a {@link FleetExchange} heavy hitters are published under. */
	public static final String TOPIC = "top";

	private final int trackedKeys;

	private final long windowNanos;

	private final LongSupplier nanoClock;

	/** Each limit's sketches. */
	private final PerLimit<StripedTopKeys> limits;

	/**
	 * Creates the tracker.
	 * @param trackedKeys how many keys each sketch tracks (the list is exact
	 * for keys heavier than the lightest tracked one)
	 * @param windowNanos how long a window lasts; readings cover the last one to two
	 * @param nanoClock the time in nanoseconds
	 */
	public HeavyHitters(int trackedKeys, long windowNanos, LongSupplier nanoClock) {
		if (trackedKeys < 1 || windowNanos <= 0) {
			throw new IllegalArgumentException(
					"tracked keys and window must be positive, were " + trackedKeys + " and " + windowNanos + " ns");
		}
		this.trackedKeys = trackedKeys;
		this.windowNanos = windowNanos;
		this.nanoClock = nanoClock;
		this.limits = new PerLimit<>((limit) -> new StripedTopKeys(trackedKeys, windowNanos, nanoClock.getAsLong()));
	}

	@Override
	public void decided(Limit limit, @Nullable String key, long units, boolean allowed, long remaining,
			long capacity, DecisionSource source) {
		if (key == null || source == DecisionSource.SHADOW) {
			return;
		}
		this.limits.of(limit).record(key, units, allowed, this.nanoClock.getAsLong());
	}

	/**
	 * Reads a limit's heaviest keys on this instance.
	 * @param kind the limit's kind
	 * @param name the limit's name
	 * @return its counts of the last one to two windows, empty when no call has been decided yet
	 */
	public Optional<Snapshot> snapshot(LimitKind kind, String name) {
		StripedTopKeys top = this.limits.find(kind, name);
		if (top == null) {
			return Optional.empty();
		}
		Tally refused = new Tally();
		Tally consumed = new Tally();
		top.addTo(this.nanoClock.getAsLong(), refused, consumed);
		return Optional.of(new Snapshot(refused.top(this.trackedKeys * 2), consumed.top(this.trackedKeys * 2)));
	}

	@Override
	public void publishTo(FleetExchange exchange) {
		for (LimitKind kind : LimitKind.values()) {
			for (String name : tracked(kind)) {
				snapshot(kind, name).ifPresent((snapshot) -> exchange.publish(TOPIC, fleetId(kind, name),
						SnapshotText.write(snapshot)));
			}
		}
	}

	/**
	 * Reads what the other instances published of a limit.
	 * @param exchange the fleet's exchange
	 * @param kind the limit's kind
	 * @param name the limit's name
	 * @return their snapshots
	 */
	public static List<Snapshot> others(FleetExchange exchange, LimitKind kind, String name) {
		return exchange.others(TOPIC, fleetId(kind, name)).stream().map(SnapshotText::read).toList();
	}

	private static String fleetId(LimitKind kind, String name) {
		return kind.label() + ':' + name;
	}

	/**
	 * Returns the names of the limits of a kind that have decided calls.
	 * @param kind the kind
	 * @return their names
	 */
	public List<String> tracked(LimitKind kind) {
		return List.copyOf(this.limits.names(kind));
	}

	/** @return how long a window lasts, in nanoseconds */
	public long windowNanos() {
		return this.windowNanos;
	}

	/**
	 * A limit's heaviest keys as one instance or the fleet counted them: keys as
	 * the limit stores them, heaviest first, each count never below the truth.
	 *
	 * @param refusals keys by calls refused
	 * @param units keys by units consumed (of a budget, micro-units)
	 */
	public record Snapshot(List<Count> refusals, List<Count> units) {

		/**
		 * Sums snapshots: the fleet's counts from each instance's.
		 * @param snapshots the snapshots
		 * @return their sum
		 */
		public static Snapshot sum(List<Snapshot> snapshots) {
			Tally refusals = new Tally();
			Tally units = new Tally();
			for (Snapshot snapshot : snapshots) {
				snapshot.refusals.forEach((count) -> refusals.add(count.key(), count.count(), count.error()));
				snapshot.units.forEach((count) -> units.add(count.key(), count.count(), count.error()));
			}
			return new Snapshot(refusals.top(Integer.MAX_VALUE), units.top(Integer.MAX_VALUE));
		}

	}

	/**
	 * One key's count.
	 *
	 * @param key the key as the limit stores it
	 * @param count its count, never below the truth
	 * @param error how much of the count may be overestimate
	 */
	public record Count(String key, long count, long error) {
	}

}

package dev.ratelimit.plans;

import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.PerLimit;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.insight.FleetExchange;
import dev.ratelimit.insight.FleetShared;

/**
 * Counts, per limit and per plan, how many distinct callers this instance
 * decided recently: what an operator needs to know before changing a plan's
 * numbers ("whom does this change?"). A decision counts for the plan whose
 * variant decided it ({@link Limit#plan()}), or for the limit's own numbers
 * ({@code ""}) when no plan did: a limit without plans, or a listed key's
 * override. Counted from {@link LimitListener#decided(Limit, String, long,
 * boolean, long, long, DecisionSource) every decision}, allowed or not, by its
 * key; calls without a key (an unkeyed cap) are not callers and are not counted.
 * <p>
 * Fixed memory: one {@link RecentDistinct} (2 KB) per limit and plan, created
 * at the first decision of that plan. A decision reads a map and a short
 * array and allocates nothing.
 */
public final class RecentCallers implements LimitListener, FleetShared {

	/** The topic of a {@link FleetExchange} recent callers are published under. */
	public static final String TOPIC = "callers";

	/** How long a caller counts as recent by default: at least 5 minutes, at most 10. */
	public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(5);

	private final TimeSource time;

	private final long windowMicros;

	/** Each limit's plans, by kind and name: a policy and a budget may share a name. */
	private final PerLimit<Plans> limits = new PerLimit<>((limit) -> new Plans());

	private final @Nullable FleetExchange fleet;

	/**
	 * Creates the counts.
	 * @param time the clock
	 * @param window how long a caller counts as recent at least (at most twice that)
	 */
	public RecentCallers(TimeSource time, Duration window) {
		this(time, window, null);
	}

	/**
	 * Creates the counts, merged with those the other instances publish.
	 * @param time the clock
	 * @param window how long a caller counts as recent at least (at most twice that)
	 * @param fleet where the instances sharing a backend publish theirs, or {@code null}
	 */
	public RecentCallers(TimeSource time, Duration window, @Nullable FleetExchange fleet) {
		this.time = time;
		this.windowMicros = window.toNanos() / 1_000;
		this.fleet = fleet;
	}

	@Override
	public void publishTo(FleetExchange exchange) {
		for (LimitKind kind : LimitKind.values()) {
			for (String name : this.limits.names(kind)) {
				Plans plans = Objects.requireNonNull(this.limits.find(kind, name), "a listed name is found");
				StringBuilder text = new StringBuilder();
				plans.registers().forEach((plan, registers) -> text.append(plan)
					.append('\t')
					.append(HexFormat.of().formatHex(registers))
					.append('\n'));
				exchange.publish(TOPIC, fleetId(kind, name), text.toString());
			}
		}
	}

	/**
	 * Returns the recent callers of a limit by plan across the fleet: this
	 * instance's counts merged with those the others published (a caller seen
	 * by two instances counts once), or this instance's alone without a fleet.
	 * @param kind the limit's kind
	 * @param limit the limit's name
	 * @return the estimates and whose calls they count
	 */
	public Counted counted(LimitKind kind, String limit) {
		Plans plans = this.limits.find(kind, limit);
		Map<String, byte[]> merged = new LinkedHashMap<>((plans != null) ? plans.registers() : Map.of());
		if (this.fleet == null) {
			return new Counted(estimates(merged), "this instance");
		}
		try {
			for (String text : this.fleet.others(TOPIC, fleetId(kind, limit))) {
				for (String line : text.split("\n")) {
					int tab = line.indexOf('\t');
					if (tab < 0) {
						continue;
					}
					byte[] registers = parseHex(line.substring(tab + 1));
					if (registers.length == RecentDistinct.REGISTERS) {
						RecentDistinct.merge(merged.computeIfAbsent(line.substring(0, tab),
								(plan) -> new byte[RecentDistinct.REGISTERS]), registers);
					}
				}
			}
		}
		catch (RuntimeException ex) {
			return new Counted(estimates(merged),
					"this instance only: the others' counts could not be read (" + ex.getMessage() + ")");
		}
		return new Counted(estimates(merged), "every instance sharing the backend");
	}

	private static String fleetId(LimitKind kind, String name) {
		return kind.label() + ':' + name;
	}

	private static Map<String, Long> estimates(Map<String, byte[]> registers) {
		Map<String, Long> estimates = new LinkedHashMap<>();
		registers.forEach((plan, merged) -> estimates.put(plan, RecentDistinct.estimate(merged)));
		return estimates;
	}

	private static byte[] parseHex(String hex) {
		try {
			return HexFormat.of().parseHex(hex.trim());
		}
		catch (IllegalArgumentException ex) {
			// written by hand or by a later version: left out
			return new byte[0];
		}
	}

	/**
	 * A limit's recent callers by plan, and whose calls were counted.
	 *
	 * @param byPlan the estimates by the plan that decided the calls ({@code ""} for the limit's own numbers)
	 * @param counted this instance, or every instance sharing the backend
	 */
	public record Counted(Map<String, Long> byPlan, String counted) {
	}

	/** @return how long a caller counts as recent at least; at most twice as long */
	public Duration window() {
		return Duration.ofNanos(this.windowMicros * 1_000);
	}

	@Override
	public void decided(Limit limit, @Nullable String key, long units, boolean allowed, long remaining,
			long capacity, DecisionSource source) {
		if (key == null) {
			return;
		}
		this.limits.of(limit).counter(limit.plan()).add(key.hashCode());
	}

	/**
	 * Returns the recent callers of a limit on this instance, by the plan that
	 * decided their calls ({@code ""} for the limit's own numbers).
	 * @param kind the limit's kind
	 * @param limit the limit's name
	 * @return the estimates, in the order the plans were first seen; empty when no call was decided
	 */
	public Map<String, Long> byPlan(LimitKind kind, String limit) {
		Plans plans = this.limits.find(kind, limit);
		return (plans != null) ? plans.estimates() : Map.of();
	}

	/**
	 * The counters of one limit's plans: an array copied on the rare write (a
	 * plan's first decision) and scanned on every read, since a limit has a
	 * handful of plans.
	 */
	private final class Plans {

		private volatile Entry[] entries = new Entry[0];

		RecentDistinct counter(@Nullable String plan) {
			String target = (plan != null) ? plan : "";
			for (Entry entry : this.entries) {
				// Plan names come from the definition's map: the same instance, so equals returns at once.
				if (entry.target.equals(target)) {
					return entry.counter;
				}
			}
			return add(target);
		}

		private synchronized RecentDistinct add(String target) {
			Entry[] entries = this.entries;
			for (Entry entry : entries) {
				if (entry.target.equals(target)) {
					return entry.counter;
				}
			}
			Entry[] grown = Arrays.copyOf(entries, entries.length + 1);
			grown[entries.length] = new Entry(target,
					new RecentDistinct(RecentCallers.this.time, RecentCallers.this.windowMicros));
			this.entries = grown;
			return grown[entries.length].counter;
		}

		Map<String, Long> estimates() {
			Map<String, Long> estimates = new LinkedHashMap<>();
			for (Entry entry : this.entries) {
				estimates.put(entry.target, entry.counter.estimate());
			}
			return estimates;
		}

		Map<String, byte[]> registers() {
			Map<String, byte[]> registers = new LinkedHashMap<>();
			for (Entry entry : this.entries) {
				registers.put(entry.target, entry.counter.registers());
			}
			return registers;
		}

	}

	private record Entry(String target, RecentDistinct counter) {
	}

}

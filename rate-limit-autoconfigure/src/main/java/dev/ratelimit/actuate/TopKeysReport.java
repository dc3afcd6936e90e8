package dev.ratelimit.actuate;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.actuate.RateLimitEndpoint.KeyState;
import dev.ratelimit.actuate.RateLimitEndpoint.TopKey;
import dev.ratelimit.actuate.RateLimitEndpoint.TopKeysState;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.insight.HeavyHitters;
import dev.ratelimit.insight.HeavyHitters.Count;
import dev.ratelimit.insight.HeavyHitters.Snapshot;
import dev.ratelimit.insight.FleetExchange;

/**
 * Builds the answer of {@code GET /actuator/ratelimits/{policy}/top}: this
 * instance's heavy hitters of a limit, summed with those the other instances
 * published when there is an exchange, each listed key with its state now.
 */
final class TopKeysReport {

	private final HeavyHitters heavyHitters;

	private final @Nullable FleetExchange exchange;

	private final int listed;

	private final boolean hashKeys;

	/**
	 * Creates the report.
	 * @param heavyHitters this instance's counts
	 * @param exchange the fleet's, or {@code null} with a backend of one instance
	 * @param listed keys listed per ranking
	 * @param hashKeys whether keys are listed hashed
	 */
	TopKeysReport(HeavyHitters heavyHitters, @Nullable FleetExchange exchange, int listed, boolean hashKeys) {
		this.heavyHitters = heavyHitters;
		this.exchange = exchange;
		this.listed = listed;
		this.hashKeys = hashKeys;
	}

	/**
	 * Reports a limit's heaviest keys.
	 * @param kind the limit's kind
	 * @param name the limit's name
	 * @param state reads a caller's key's state now, by limit name and caller's key
	 * @return the report
	 */
	TopKeysState report(LimitKind kind, String name, BiFunction<String, String, @Nullable KeyState> state) {
		List<Snapshot> snapshots = new ArrayList<>();
		this.heavyHitters.snapshot(kind, name).ifPresent(snapshots::add);
		String fleet = "this instance";
		int instances = 1;
		if (this.exchange != null) {
			try {
				List<Snapshot> others = HeavyHitters.others(this.exchange, kind, name);
				snapshots.addAll(others);
				instances += others.size();
				fleet = "every instance sharing the backend";
			}
			catch (RuntimeException ex) {
				// The operator still learns what this instance saw, and why the rest is missing.
				fleet = "this instance only: the others' counts could not be read (" + ex.getMessage() + ")";
			}
		}
		Snapshot sum = Snapshot.sum(snapshots);
		Map<String, Count> refusals = byKey(sum.refusals());
		Map<String, Count> units = byKey(sum.units());
		Function<Count, TopKey> entry = (count) -> topKey(kind, name, count.key(), refusals.get(count.key()),
				units.get(count.key()), state);
		long window = this.heavyHitters.windowNanos();
		return new TopKeysState(name, kind.label(), Duration.ofNanos(window).toString(),
				Duration.ofNanos(2 * window).toString(), fleet, instances, this.hashKeys, unitOf(kind),
				sum.refusals().stream().limit(this.listed).map(entry).toList(),
				sum.units().stream().limit(this.listed).map(entry).toList());
	}

	private TopKey topKey(LimitKind kind, String name, String stored, @Nullable Count refused, @Nullable Count used,
			BiFunction<String, String, @Nullable KeyState> state) {
		// Rate limits and budgets hear storage keys; caps hear the caller's value itself.
		String caller = (kind == LimitKind.CONCURRENCY) ? stored : LimitKeys.callerValue(stored);
		// The bucket shared by keyless callers, and keys too long to keep, have no caller's key to read by.
		boolean readable = kind == LimitKind.CONCURRENCY || !(caller.startsWith("%h") || caller.equals("%none"));
		// A key's state names the key: listing it would undo the hashing.
		readable = readable && !this.hashKeys;
		KeyState now = readable ? state.apply(name, caller) : null;
		return new TopKey(this.hashKeys ? hashed(caller) : caller, (refused != null) ? refused.count() : 0,
				(refused != null) ? refused.error() : 0, amount(kind, (used != null) ? used.count() : 0),
				amount(kind, (used != null) ? used.error() : 0), now);
	}

	/** Units as listed: a budget's in its unit (counted in micro-units), the others' whole. */
	private static BigDecimal amount(LimitKind kind, long units) {
		return (kind == LimitKind.BUDGET) ? RateLimitEndpoint.decimal(units) : BigDecimal.valueOf(units);
	}

	private static Map<String, Count> byKey(List<Count> counts) {
		return counts.stream().collect(Collectors.toMap(Count::key, Function.identity(), (a, b) -> a));
	}

	private static String unitOf(LimitKind kind) {
		return switch (kind) {
			case RATE_LIMIT -> "tokens";
			case BUDGET -> "the budget's unit";
			case CONCURRENCY -> "permits taken";
		};
	}

	/** The first 16 hex digits of the SHA-256 of a caller's key: enough to tell keys apart, not to read them. */
	static String hashed(String caller) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(caller.getBytes(StandardCharsets.UTF_8));
			return "sha256:" + HexFormat.of().formatHex(digest, 0, 8);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

}

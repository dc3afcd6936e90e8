package dev.ratelimit.metrics;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.function.Supplier;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.PerLimit;

/**
 * Shows every decision of every kind of limit in the trace of the request it
 * was taken for: on the current {@link Observation} (the HTTP server request's
 * in a servlet application), high-cardinality key values per limit for every
 * decision, and an event for every decision that did not simply let the call
 * through, which a tracing handler turns into span tags and span events.
 * <ul>
 * <li>events {@value #DECISION_EVENT} (a refusal, a shadow policy's
 * would-be refusal, a local fallback's decision), {@value #FALLBACK_EVENT} (a store
 * failed and the limit's failure mode applied) and {@value #SHED_EVENT} (an
 * adaptive cap shed a call), each with a contextual name that says the limit,
 * the outcome and what is left, for example
 * {@code policy search denied, remaining 0 of 10};</li>
 * <li>key values {@code rate.limit.<kind>.<name>.<field>}, where the kind is
 * {@code policy}, {@code budget} or {@code concurrency} (as in
 * {@code rate-limit.policies}, {@code rate-limit.budgets},
 * {@code rate-limit.concurrency}) and the fields are {@code outcome}
 * ({@code allowed}, {@code denied}, {@code shadow}, {@code fallback}, or
 * {@code shed}: the values of the metrics), {@code remaining} and
 * {@code capacity} (tokens, or a budget's units; absent for caps),
 * {@code fallback} (the failure mode that applied), {@code priority} (the
 * class of a call an adaptive cap shed) and, only when asked for,
 * {@code key} (the caller's value). A limit deciding twice in one request
 * keeps its last values; the events keep every refusal.</li>
 * </ul>
 * The caller's key is left out by default: traces are often kept longer and
 * seen by more people than the limiter's store, and a key may be an API key or
 * an e-mail address.
 * <p>
 * Without a current observation (no registry, a decision outside any
 * request, an observation switched off, a WebFlux decision taken outside the
 * route filter's scope) every event returns at once and allocates nothing.
 * With one, recording allocates (the event, its text, the key values): the
 * price of the trace, paid only where a trace is taken.
 */
public final class ObservationLimitListener implements LimitListener {

	/** Name of the event recorded for every decision. */
	public static final String DECISION_EVENT = "rate.limit.decision";

	/** Name of the event recorded when a store failed and a failure mode applied. */
	public static final String FALLBACK_EVENT = "rate.limit.fallback";

	/** Name of the event recorded when an adaptive cap shed a call. */
	public static final String SHED_EVENT = "rate.limit.shed";

	private final Supplier<@Nullable ObservationRegistry> registry;

	private final boolean includeKey;

	/** Each limit's names of its key values, built once. */
	private final PerLimit<KeyNames> keyNames;

	/**
	 * Creates a listener.
	 * @param registry supplies the registry, resolved on first use so that the
	 * listener can exist before the registry does; {@code null} while there is none
	 * @param includeKey whether to put the caller's value of the key in traces
	 */
	public ObservationLimitListener(Supplier<@Nullable ObservationRegistry> registry, boolean includeKey) {
		this.registry = registry;
		this.includeKey = includeKey;
		this.keyNames = new PerLimit<>((limit) -> new KeyNames(limit.kind(), limit.name()));
	}

	@Override
	public void decided(Limit limit, @Nullable String key, long units, boolean allowed, long remaining,
			long capacity, DecisionSource source) {
		Observation observation = current();
		if (observation == null) {
			return;
		}
		KeyNames names = names(limit);
		String outcome = outcome(allowed, source);
		observation.highCardinalityKeyValue(names.outcome, outcome);
		// A call simply let through is told by the key values alone: an event per admitted decision would cost
		// every request an event, and Micrometer's meter handler a counter increment per event.
		boolean event = !allowed || source != DecisionSource.STORE;
		StringBuilder text = event ? new StringBuilder(64).append(names.label).append(' ').append(outcome) : null;
		if (text != null && source == DecisionSource.LOCAL_FALLBACK) {
			// "fallback" is the metrics' outcome; whether the local decision let the call through is worth a word.
			text.append(allowed ? " (allowed locally)" : " (denied locally)");
		}
		if (remaining >= 0) {
			String left = amount(limit, remaining);
			observation.highCardinalityKeyValue(names.remaining, left);
			if (text != null) {
				text.append(", remaining ").append(left);
			}
			if (capacity >= 0) {
				String whole = amount(limit, capacity);
				observation.highCardinalityKeyValue(names.capacity, whole);
				if (text != null) {
					text.append(" of ").append(whole);
				}
			}
		}
		if (this.includeKey && key != null) {
			// Caps are handed the caller's value; rate limits and budgets their storage key.
			String caller = (limit.kind() == LimitKind.CONCURRENCY) ? key : LimitKeys.callerValue(key);
			observation.highCardinalityKeyValue(names.key, caller);
		}
		if (text != null) {
			observation.event(Observation.Event.of(DECISION_EVENT, text.toString()));
		}
	}

	@Override
	public void fellBack(Limit limit, FailureMode mode, RuntimeException cause) {
		Observation observation = current();
		if (observation == null) {
			return;
		}
		KeyNames names = names(limit);
		String label = mode.name().toLowerCase(Locale.ROOT);
		observation.highCardinalityKeyValue(names.outcome, "fallback");
		observation.highCardinalityKeyValue(names.fallback, label);
		observation.event(Observation.Event.of(FALLBACK_EVENT,
				names.label + " fallback " + label + ": " + cause.getClass().getSimpleName()));
	}

	@Override
	public void shed(Limit cap, String priority, boolean shadow) {
		Observation observation = current();
		if (observation == null) {
			return;
		}
		KeyNames names = names(cap);
		String outcome = shadow ? "shadow" : "shed";
		observation.highCardinalityKeyValue(names.outcome, outcome);
		observation.highCardinalityKeyValue(names.priority, priority);
		observation.event(Observation.Event.of(SHED_EVENT, names.label + ' ' + outcome + ' ' + priority));
	}

	/** The observation to record on, or {@code null}: no field is read, nothing is built, when there is none. */
	private @Nullable Observation current() {
		ObservationRegistry observations = this.registry.get();
		if (observations == null) {
			return null;
		}
		Observation observation = observations.getCurrentObservation();
		return (observation == null || observation.isNoop()) ? null : observation;
	}

	private KeyNames names(Limit limit) {
		return this.keyNames.of(limit);
	}

	/** The outcome as the metrics name it: a shadow policy's allowed call is allowed, its denial a shadow one. */
	private static String outcome(boolean allowed, DecisionSource source) {
		return switch (source) {
			case STORE -> allowed ? "allowed" : "denied";
			case LOCAL_FALLBACK -> "fallback";
			case SHADOW -> allowed ? "allowed" : "shadow";
		};
	}

	/** Tokens as they are; a budget's micro-units as a decimal number of its units. */
	private static String amount(Limit limit, long value) {
		if (limit.kind() == LimitKind.BUDGET) {
			return BigDecimal.valueOf(value, 6).stripTrailingZeros().toPlainString();
		}
		return Long.toString(value);
	}

	/** What {@code rate.limit.<kind>.<name>} is called, and the names of its key values. */
	private static final class KeyNames {

		final String label;

		final String outcome;

		final String remaining;

		final String capacity;

		final String fallback;

		final String priority;

		final String key;

		KeyNames(LimitKind kind, String name) {
			String prefix = switch (kind) {
				case RATE_LIMIT -> "policy";
				case BUDGET -> "budget";
				case CONCURRENCY -> "concurrency";
			};
			this.label = prefix + ' ' + name;
			String base = "rate.limit." + prefix + '.' + name + '.';
			this.outcome = base + "outcome";
			this.remaining = base + "remaining";
			this.capacity = base + "capacity";
			this.fallback = base + "fallback";
			this.priority = base + "priority";
			this.key = base + "key";
		}

	}

}

package dev.ratelimit.core;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The numbers of a limit that a plan, a per-key override or a run-time override
 * may change, for every kind: a rate limit's capacity, refill and window, a
 * budget's amount, a concurrency cap's permits. A {@code null} number keeps the
 * limit's own; a number the limit's kind does not have is refused by the
 * kind's {@code withQuota}. Everything else (name, key, algorithm, failure mode,
 * visibility) stays the limit's, so that a plan or an override changes how
 * much, never whose or how.
 *
 * @param capacity a rate limit's capacity, or {@code null}
 * @param refill a rate limit's refill, or {@code null}
 * @param windowMicros a rate limit's window in microseconds, or {@code null}
 * @param amountMicros a budget's amount in micro-units, or {@code null}
 * @param permits a concurrency cap's permits, or {@code null}
 */
public record Quota(@Nullable Long capacity, @Nullable Refill refill, @Nullable Long windowMicros,
		@Nullable Long amountMicros, @Nullable Integer permits) {

	/** No number changed. */
	public static final Quota NONE = new Quota(null, null, null, null, null);

	/** @return whether no number is set */
	public boolean isEmpty() {
		return equals(NONE);
	}

	/**
	 * Returns this quota with another's numbers laid over it: a number the other
	 * sets wins.
	 * @param over the quota laid over this one
	 * @return the combined quota
	 */
	public Quota overlaidWith(Quota over) {
		return new Quota(pick(over.capacity, this.capacity), pick(over.refill, this.refill),
				pick(over.windowMicros, this.windowMicros), pick(over.amountMicros, this.amountMicros),
				pick(over.permits, this.permits));
	}

	/**
	 * Throws when the quota sets a number the limit's kind does not have.
	 * @param kind the kind
	 * @throws PolicyValidationException naming the first foreign number
	 */
	public void checkKind(LimitKind kind) {
		for (Map.Entry<String, Object> number : numbers().entrySet()) {
			String name = number.getKey();
			boolean own = switch (kind) {
				case RATE_LIMIT -> name.equals("capacity") || name.equals("refill") || name.equals("window");
				case BUDGET -> name.equals("amount");
				case CONCURRENCY -> name.equals("permits");
			};
			if (!own) {
				throw new PolicyValidationException(name, String.valueOf(number.getValue()), "a " + kind.label()
						+ " has no " + name + "; use " + switch (kind) {
							case RATE_LIMIT -> "capacity, refill or window";
							case BUDGET -> "amount";
							case CONCURRENCY -> "permits";
						});
			}
		}
	}

	/**
	 * Returns the numbers set, by their property name, for reports and logs.
	 * @return the set numbers, in a fixed order
	 */
	public Map<String, Object> numbers() {
		Map<String, Object> numbers = new LinkedHashMap<>();
		put(numbers, "capacity", this.capacity);
		put(numbers, "refill", (this.refill != null) ? this.refill.toString() : null);
		put(numbers, "window", (this.windowMicros != null) ? Durations.format(this.windowMicros) : null);
		put(numbers, "amount", (this.amountMicros != null) ? java.math.BigDecimal.valueOf(this.amountMicros, 6).stripTrailingZeros().toPlainString() : null);
		put(numbers, "permits", this.permits);
		return numbers;
	}

	@Override
	public String toString() {
		return numbers().toString();
	}

	private static void put(Map<String, Object> numbers, String name, @Nullable Object value) {
		if (value != null) {
			numbers.put(name, value);
		}
	}

	private static <T> @Nullable T pick(@Nullable T over, @Nullable T under) {
		return (over != null) ? over : under;
	}

}

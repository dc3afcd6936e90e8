package dev.ratelimit.budget;

import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Objects;

import dev.ratelimit.core.AbstractLimit;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.Quota;

/**
 * A named spending cap: one or more amounts, each per window (for example
 * 5.00 USD per day and 100.00 USD per month), checked together for every
 * reservation. Amounts are in micro-units of {@link #unit()}.
 * <p>
 * Immutable and validated in {@link Builder#build()}; every error names the
 * attribute. Unlike the other kinds, a budget fails closed by default.
 */
public final class BudgetPolicy extends AbstractLimit {

	private final String unit;

	private final ZoneId zone;

	private final List<BudgetLimit> limits;

	private final long reservationTimeoutMicros;

	private final OnError onError;

	private final OnOverrun onOverrun;

	private BudgetPolicy(Builder builder) {
		super(builder);
		this.unit = builder.unit;
		this.zone = builder.zone;
		this.limits = List.copyOf(builder.limits);
		this.reservationTimeoutMicros = builder.reservationTimeoutMicros;
		this.onError = builder.onError;
		this.onOverrun = builder.onOverrun;
	}

	/**
	 * Starts a budget.
	 * @param name 1 to 64 letters, digits, '.', '_' or '-'
	 * @return a builder
	 */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	@Override
	public LimitKind kind() {
		return LimitKind.BUDGET;
	}

	/** @return the unit amounts are counted in, such as {@code USD} or {@code tokens} */
	public String unit() {
		return this.unit;
	}

	/** @return the time zone of calendar windows */
	public ZoneId zone() {
		return this.zone;
	}

	/** @return the amounts and their windows, checked together */
	public List<BudgetLimit> limits() {
		return this.limits;
	}

	/**
	 * Returns how long a reservation lives if its caller never settles it: then
	 * its amount returns to the budget.
	 * @return the reservation timeout in microseconds
	 */
	public long reservationTimeoutMicros() {
		return this.reservationTimeoutMicros;
	}

	/** @return what a failed call is charged when its actual cost is unknown */
	public OnError onError() {
		return this.onError;
	}

	/** @return what a metered stream does when its usage would pass its reservation */
	public OnOverrun onOverrun() {
		return this.onOverrun;
	}

	@Override
	public BudgetPolicy withQuota(Quota quota) {
		quota.checkKind(LimitKind.BUDGET);
		if (quota.isEmpty()) {
			return this;
		}
		long amountMicros = Objects.requireNonNull(quota.amountMicros(), "a budget's quota sets the amount");
		if (this.limits.size() != 1) {
			throw new PolicyValidationException("amount", Amounts.format(amountMicros), "budget '" + name()
					+ "' has " + this.limits.size() + " windows; an amount replaces the amount of a budget with one");
		}
		Builder builder = toBuilder();
		BudgetWindow window = builder.limits.get(0).window();
		builder.limits.clear();
		return builder.limit(window, amountMicros).build();
	}

	@Override
	public BudgetPolicy withPlan(String plan) {
		return Objects.equals(plan, plan()) ? this : toBuilder().plan(plan).build();
	}

	/**
	 * Returns a builder initialised with this budget's values, to derive a
	 * variant (another key, another visibility).
	 * @return a builder
	 */
	public Builder toBuilder() {
		Builder builder = copyTo(new Builder(name())).unit(this.unit).zone(this.zone)
			.onError(this.onError)
			.onOverrun(this.onOverrun);
		builder.limits.addAll(this.limits);
		builder.reservationTimeoutMicros = this.reservationTimeoutMicros;
		return builder;
	}

	/**
	 * Equal when every value is: two budgets built from the same configuration
	 * are the same budget, so that a refresh that changes nothing rebuilds nothing.
	 */
	@Override
	public boolean equals(Object other) {
		return this == other || (other instanceof BudgetPolicy that && name().equals(that.name())
				&& key().equals(that.key()) && failureMode() == that.failureMode()
				&& visibility() == that.visibility() && this.unit.equals(that.unit) && this.zone.equals(that.zone)
				&& this.limits.equals(that.limits) && this.reservationTimeoutMicros == that.reservationTimeoutMicros
				&& this.onError == that.onError && this.onOverrun == that.onOverrun);
	}

	@Override
	public int hashCode() {
		return Objects.hash(name(), key(), this.unit, this.limits);
	}

	@Override
	public String toString() {
		return "BudgetPolicy[" + name() + ": " + this.limits + " " + this.unit + " key=" + key() + " zone="
				+ this.zone + " failure-mode=" + failureMode() + " reservation-timeout=" + this.reservationTimeoutMicros
				+ "us on-error="
				+ this.onError + " on-overrun=" + this.onOverrun + "]";
	}

	/**
	 * Builds a {@link BudgetPolicy}.
	 */
	public static final class Builder extends AbstractBuilder<Builder, BudgetPolicy> {

		private String unit = "units";

		private ZoneId zone = ZoneId.of("UTC");

		private final java.util.ArrayList<BudgetLimit> limits = new java.util.ArrayList<>();

		private long reservationTimeoutMicros = Duration.ofMinutes(5).toNanos() / 1_000L;

		private OnError onError = OnError.KEEP;

		private OnOverrun onOverrun = OnOverrun.STOP;

		private Builder(String name) {
			// A budget's store is its record of spend: without it, nothing stops the spending.
			super(name, FailureMode.CLOSED);
		}

		/**
		 * Sets the unit, for messages and headers.
		 * @param unit the unit, for example {@code USD}
		 * @return this builder
		 */
		public Builder unit(String unit) {
			if (unit == null || unit.isBlank() || unit.chars().anyMatch((c) -> c == '"' || c == '\\' || c < 0x20)) {
				throw new PolicyValidationException("unit", unit, "must be a short name without quotes");
			}
			this.unit = unit.strip();
			return this;
		}

		/**
		 * Sets the time zone of calendar windows; UTC by default.
		 * @param zone the zone
		 * @return this builder
		 */
		public Builder zone(ZoneId zone) {
			this.zone = Objects.requireNonNull(zone, "zone");
			return this;
		}

		/**
		 * Adds an amount per window.
		 * @param window the window
		 * @param amountMicros the amount in micro-units
		 * @return this builder
		 */
		public Builder limit(BudgetWindow window, long amountMicros) {
			try {
				this.limits.add(new BudgetLimit(window, amountMicros));
			}
			catch (IllegalArgumentException ex) {
				throw new PolicyValidationException("limits[" + this.limits.size() + "].amount",
						Amounts.format(amountMicros), ex.getMessage());
			}
			return this;
		}

		/**
		 * Adds an amount per window from text: {@code limit("day", "5.00")}.
		 * @param window {@code day}, {@code week}, {@code month} or a rolling duration
		 * @param amount the decimal amount
		 * @return this builder
		 */
		public Builder limit(String window, String amount) {
			String prefix = "limits[" + this.limits.size() + "].";
			BudgetWindow parsedWindow;
			long micros;
			try {
				parsedWindow = BudgetWindow.parse(window);
			}
			catch (IllegalArgumentException ex) {
				throw new PolicyValidationException(prefix + "window", window, ex.getMessage());
			}
			try {
				micros = Amounts.parseMicros(amount);
			}
			catch (IllegalArgumentException ex) {
				throw new PolicyValidationException(prefix + "amount", amount, ex.getMessage());
			}
			return limit(parsedWindow, micros);
		}

		/**
		 * Sets how long an unsettled reservation lives; 5 minutes by default.
		 * @param reservationTimeout the reservation timeout, positive
		 * @return this builder
		 */
		public Builder reservationTimeout(Duration reservationTimeout) {
			long micros = reservationTimeout.toNanos() / 1_000L;
			if (micros <= 0) {
				throw new PolicyValidationException("reservation-timeout", reservationTimeout, "must be positive");
			}
			this.reservationTimeoutMicros = micros;
			return this;
		}

		/**
		 * Sets what a failed call is charged when its actual cost is unknown.
		 * @param onError the rule
		 * @return this builder
		 */
		public Builder onError(OnError onError) {
			this.onError = Objects.requireNonNull(onError, "onError");
			return this;
		}

		/**
		 * Sets what a metered stream does when its usage would pass its
		 * reservation; {@link OnOverrun#STOP} by default.
		 * @param onOverrun the rule
		 * @return this builder
		 */
		public Builder onOverrun(OnOverrun onOverrun) {
			this.onOverrun = Objects.requireNonNull(onOverrun, "onOverrun");
			return this;
		}

		/**
		 * Builds the budget.
		 * @return the budget
		 * @throws PolicyValidationException if no amount is set
		 */
		@Override
		public BudgetPolicy build() {
			if (this.limits.isEmpty()) {
				throw new PolicyValidationException("limits", "[]",
						"at least one amount per window is required, for example day: 5.00");
			}
			return new BudgetPolicy(this);
		}

	}

}

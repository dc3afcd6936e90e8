package dev.ratelimit.budget;

import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Objects;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.Visibility;

/**
 * A named spending cap: one or more amounts, each per window (for example
 * 5.00 USD per day and 100.00 USD per month), checked together for every
 * reservation. Amounts are in micro-units of {@link #unit()}.
 * <p>
 * Immutable and validated in {@link Builder#build()}; every error names the
 * attribute.
 */
public final class BudgetPolicy implements Limit {

	private final String name;

	private final String unit;

	private final String key;

	private final ZoneId zone;

	private final List<BudgetLimit> limits;

	private final FailureMode failureMode;

	private final long reservationTimeoutMicros;

	private final OnError onError;

	private final Visibility visibility;

	private BudgetPolicy(Builder builder) {
		this.name = builder.name;
		this.unit = builder.unit;
		this.key = builder.key;
		this.zone = builder.zone;
		this.limits = List.copyOf(builder.limits);
		this.failureMode = builder.failureMode;
		this.reservationTimeoutMicros = builder.reservationTimeoutMicros;
		this.onError = builder.onError;
		this.visibility = builder.visibility;
	}

	/**
	 * Starts a budget.
	 * @param name 1 to 64 letters, digits, '.', '_' or '-'
	 * @return a builder
	 */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	/** @return the budget's name */
	@Override
	public String name() {
		return this.name;
	}

	@Override
	public LimitKind kind() {
		return LimitKind.BUDGET;
	}

	/** @return the unit amounts are counted in, such as {@code USD} or {@code tokens} */
	public String unit() {
		return this.unit;
	}

	/** @return the key expression: whose budget it is */
	@Override
	public String key() {
		return this.key;
	}

	/** @return the time zone of calendar windows */
	public ZoneId zone() {
		return this.zone;
	}

	/** @return the amounts and their windows, checked together */
	public List<BudgetLimit> limits() {
		return this.limits;
	}

	/** @return what happens when the store cannot answer; budgets fail closed by default */
	@Override
	public FailureMode failureMode() {
		return this.failureMode;
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

	/** @return whether the budget's state may be told to the caller */
	@Override
	public Visibility visibility() {
		return this.visibility;
	}

	/**
	 * Returns a builder initialised with this budget's values, to derive a
	 * variant (another key, another visibility).
	 * @return a builder
	 */
	public Builder toBuilder() {
		Builder builder = new Builder(this.name).unit(this.unit)
			.key(this.key)
			.zone(this.zone)
			.failureMode(this.failureMode)
			.onError(this.onError)
			.visibility(this.visibility);
		builder.limits.addAll(this.limits);
		builder.reservationTimeoutMicros = this.reservationTimeoutMicros;
		return builder;
	}

	@Override
	public String toString() {
		return "BudgetPolicy[" + this.name + ": " + this.limits + " " + this.unit + " key=" + this.key + " zone="
				+ this.zone + " failure-mode=" + this.failureMode + " reservation-timeout=" + this.reservationTimeoutMicros
				+ "us on-error="
				+ this.onError + "]";
	}

	/**
	 * Builds a {@link BudgetPolicy}.
	 */
	public static final class Builder {

		private final String name;

		private String unit = "units";

		private String key = "global";

		private ZoneId zone = ZoneId.of("UTC");

		private final java.util.ArrayList<BudgetLimit> limits = new java.util.ArrayList<>();

		private FailureMode failureMode = FailureMode.CLOSED;

		private long reservationTimeoutMicros = Duration.ofMinutes(5).toNanos() / 1_000L;

		private OnError onError = OnError.KEEP;

		private Visibility visibility = Visibility.AUTO;

		private Builder(String name) {
			this.name = Limit.checkName(name);
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
		 * Sets the key expression; blank means {@code global}.
		 * @param key the key expression
		 * @return this builder
		 */
		public Builder key(String key) {
			this.key = (key == null || key.isBlank()) ? "global" : key.strip();
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
		 * Sets whether the budget's state may be told to the caller.
		 * @param visibility the visibility, {@link Visibility#AUTO} by default
		 * @return this builder
		 */
		public Builder visibility(Visibility visibility) {
			this.visibility = Objects.requireNonNull(visibility, "visibility");
			return this;
		}

		/**
		 * Sets the failure mode; budgets default to {@link FailureMode#CLOSED}.
		 * @param failureMode the failure mode
		 * @return this builder
		 */
		public Builder failureMode(FailureMode failureMode) {
			this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
			return this;
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
		 * Builds the budget.
		 * @return the budget
		 * @throws PolicyValidationException if no amount is set
		 */
		public BudgetPolicy build() {
			if (this.limits.isEmpty()) {
				throw new PolicyValidationException("limits", "[]",
						"at least one amount per window is required, for example day: 5.00");
			}
			return new BudgetPolicy(this);
		}

	}

}

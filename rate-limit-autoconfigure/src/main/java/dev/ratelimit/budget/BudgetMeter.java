package dev.ratelimit.budget;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The usage of one budgeted call whose cost is known only as it goes — a
 * streamed answer, token by token — against the call's reservations. The
 * stream reports what it uses with {@link #add(BigDecimal)}; when it ends, its
 * reservations are settled to what it reported, never to the estimate.
 * <p>
 * A {@code @CostBudget} method gets its call's meter from {@link #current()},
 * <em>in its body</em>, and hands it to the code that writes the stream, which
 * usually runs on another thread:
 *
 * <pre class="code">
 * &#64;CostBudget(value = "tenant-daily", key = "#tenant", estimate = "#request.maxTokens * 0.000002")
 * SseEmitter stream(String tenant, ChatRequest request) {
 *     BudgetMeter meter = BudgetMeter.current();
 *     SseEmitter emitter = new SseEmitter();
 *     executor.execute(() -&gt; {
 *         for (String token : tokens(request)) {
 *             if (!meter.add("0.000002")) {
 *                 emitter.send(SseEmitter.event().name("budget-exceeded").data("stopped"));
 *                 break;
 *             }
 *             emitter.send(token);
 *         }
 *         emitter.complete();
 *     });
 *     return emitter;
 * }
 * </pre>
 *
 * <b>Overrun.</b> Usage that would pass a reservation follows the budget's
 * {@link OnOverrun} rule: {@code stop} refuses it at once; {@code extend}
 * first reserves more against the budget, atomically (one script call on
 * Redis), another estimate at a time or exactly what is missing when a whole
 * estimate does not fit, and refuses only when the budget does. A refused
 * {@code add} returns {@code false}, and so does every later one: the stream
 * must end (a clear completion, or a last event saying why). The call is then
 * charged its whole reservation — the usage that passed it was produced, and
 * is charged up to the reservation, never beyond. Reporting usage before
 * sending it keeps what the client receives within the reservation as well.
 * <p>
 * With several budgets on one call, an amount is added to each of them (their
 * unit is assumed to be the same), and a refusal by any stops the stream.
 * Thread-safe; reports from several threads add up.
 */
public final class BudgetMeter {

	private static final ThreadLocal<BudgetMeter> CURRENT = new ThreadLocal<>();

	private final List<Metered> budgets;

	/**
	 * Guards the usage. A lock, not a monitor: an {@code extend} rule asks the
	 * store for more while holding it (a Redis round trip), on the thread that
	 * writes the stream, often a virtual one; a virtual thread that parks inside
	 * a monitor pins its carrier on JDK 21 to 23.
	 */
	private final ReentrantLock lock = new ReentrantLock();

	/** Guarded by the lock. */
	private boolean reported;

	/** Guarded by the lock. */
	private boolean stopped;

	/**
	 * Meters reservations, each by its budget's {@link OnOverrun} rule.
	 * @param reservations the reservations; {@code null} for a budget the call
	 * is exempt from, whose usage is counted but never refused
	 */
	public BudgetMeter(List<Reservation> reservations) {
		this(reservations, Collections.nCopies(reservations.size(), null));
	}

	/**
	 * Meters reservations.
	 * @param reservations the reservations; {@code null} for a budget the call
	 * is exempt from
	 * @param rules the overrun rule of each reservation, {@code null} for its
	 * budget's own
	 */
	public BudgetMeter(List<Reservation> reservations, List<OnOverrun> rules) {
		if (reservations.size() != rules.size()) {
			throw new IllegalArgumentException(
					"one overrun rule per reservation: " + reservations.size() + " and " + rules.size());
		}
		List<Metered> budgets = new ArrayList<>(reservations.size());
		for (int i = 0; i < reservations.size(); i++) {
			Reservation reservation = reservations.get(i);
			OnOverrun rule = rules.get(i);
			budgets.add(new Metered(reservation, (rule != null || reservation == null) ? rule
					: reservation.policy().onOverrun()));
		}
		this.budgets = List.copyOf(budgets);
	}

	/**
	 * Returns the meter of the {@code @CostBudget} call whose method is running
	 * on this thread. Call it in the method's body and hand the meter to the
	 * code that writes the stream: on that code's thread there is no current
	 * meter.
	 * @return the meter
	 * @throws IllegalStateException outside the body of a method with a budget
	 */
	public static BudgetMeter current() {
		BudgetMeter meter = CURRENT.get();
		if (meter == null) {
			throw new IllegalStateException("No budgeted call is running on this thread: call BudgetMeter.current() "
					+ "in the body of a @CostBudget method, and hand the meter to the thread that writes the stream");
		}
		return meter;
	}

	/**
	 * Makes a meter the current one on this thread until the scope is closed;
	 * the {@code @CostBudget} advice does it around each call.
	 * @param meter the meter
	 * @return the scope, which restores the meter current before
	 */
	public static Scope bind(BudgetMeter meter) {
		BudgetMeter previous = CURRENT.get();
		CURRENT.set(meter);
		return () -> {
			if (previous != null) {
				CURRENT.set(previous);
			}
			else {
				CURRENT.remove();
			}
		};
	}

	/**
	 * Reports usage in the budgets' unit, rounded up to the next micro-unit.
	 * @param amount the amount used, not negative
	 * @return {@code true} when it fits; {@code false} when the stream must stop
	 */
	public boolean add(BigDecimal amount) {
		return addMicros(Amounts.toMicrosRoundingUp(amount));
	}

	/**
	 * Reports usage in the budgets' unit, as a decimal such as {@code "0.000002"}.
	 * @param amount the amount used, not negative
	 * @return {@code true} when it fits; {@code false} when the stream must stop
	 */
	public boolean add(String amount) {
		return addMicros(Amounts.parseMicros(amount));
	}

	/**
	 * Reports usage in micro-units.
	 * @param micros the amount used, not negative
	 * @return {@code true} when it fits; {@code false} when the stream must stop
	 */
	public boolean addMicros(long micros) {
		this.lock.lock();
		try {
			if (micros < 0 || micros > Amounts.MAX_MICROS) {
				throw new IllegalArgumentException(
						"usage is outside 0.." + Amounts.format(Amounts.MAX_MICROS) + ": " + Amounts.format(micros));
			}
			this.reported = true;
			if (this.stopped) {
				return false;
			}
			for (Metered budget : this.budgets) {
				if (!budget.fits(micros)) {
					stop();
					return false;
				}
			}
			for (Metered budget : this.budgets) {
				budget.usedMicros += micros;
			}
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Returns whether reporting this much now would ask the store for more
	 * (an {@code extend} rule whose reservation it would pass), which on a
	 * remote store waits for a reply; otherwise {@link #addMicros} answers
	 * from memory at once. A reactive stream reports such usage off its event
	 * loop (see {@link MeteredFlux}).
	 * @param micros the amount about to be reported
	 * @return whether the report may wait on the store
	 */
	public boolean wouldExtend(long micros) {
		this.lock.lock();
		try {
			if (this.stopped) {
				return false;
			}
			for (Metered budget : this.budgets) {
				if (budget.rule == OnOverrun.EXTEND && budget.reservation != null
						&& budget.usedMicros + micros > budget.reservation.reservedMicros()) {
					return true;
				}
			}
			return false;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Stops at the reservations: each is used up, and every later report refused. */
	private void stop() {
		this.stopped = true;
		for (Metered budget : this.budgets) {
			if (budget.reservation != null) {
				budget.usedMicros = Math.max(budget.usedMicros, budget.reservation.reservedMicros());
			}
		}
	}

	/** @return whether any usage was reported, even zero */
	public boolean reported() {
		this.lock.lock();
		try {
			return this.reported;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** @return whether the stream was stopped at its reservation */
	public boolean stopped() {
		this.lock.lock();
		try {
			return this.stopped;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Returns the usage to charge the first budget: what was reported, or the
	 * whole reservation once stopped.
	 * @return the usage in micro-units
	 */
	public long usedMicros() {
		return usedMicros(0);
	}

	/**
	 * Returns the usage to charge one of the call's budgets.
	 * @param index the budget's position among the call's reservations
	 * @return the usage in micro-units
	 */
	public long usedMicros(int index) {
		this.lock.lock();
		try {
			return this.budgets.get(index).usedMicros;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * The current meter's scope on a thread.
	 */
	@FunctionalInterface
	public interface Scope extends AutoCloseable {

		/** Restores the meter current before. */
		@Override
		void close();

	}

	/** One reservation's usage; guarded by the meter's monitor. */
	private static final class Metered {

		private final Reservation reservation;

		private final OnOverrun rule;

		private long usedMicros;

		Metered(Reservation reservation, OnOverrun rule) {
			this.reservation = reservation;
			this.rule = rule;
		}

		/** Whether the usage fits, extending the reservation when the rule allows. */
		boolean fits(long micros) {
			if (this.reservation == null) {
				return true;
			}
			long shortfall = this.usedMicros + micros - this.reservation.reservedMicros();
			if (shortfall <= 0) {
				return true;
			}
			if (this.rule != OnOverrun.EXTEND) {
				return false;
			}
			long chunk = Math.max(this.reservation.estimateMicros(), shortfall);
			// A whole chunk first, so that a long stream asks the store rarely; then only what is missing.
			return this.reservation.extend(chunk) || (chunk > shortfall && this.reservation.extend(shortfall));
		}

	}

}

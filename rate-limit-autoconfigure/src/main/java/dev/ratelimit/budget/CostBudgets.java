package dev.ratelimit.budget;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.AnnouncedOutage;
import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.Causes;
import dev.ratelimit.core.FailureModes;
import dev.ratelimit.core.InvalidCostException;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.LimitListener.DecisionSource;
import dev.ratelimit.core.PendingWrites;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.RateLimitKeyMissingException;
import dev.ratelimit.core.StoreHealth;
import dev.ratelimit.core.UnconfirmedWrite;
import dev.ratelimit.core.UniqueIds;

/**
 * The programmatic API of budgets: reserve before the work, settle to the
 * actual cost after it (or release), read what remains. Used by the
 * {@code @CostBudget} aspect and directly for work whose cost is only known
 * later, such as a streamed response:
 *
 * <pre class="code">
 * Reservation reservation = budgets.reserve(policy, tenant, Amounts.parseMicros("0.20"));
 * try {
 *     Usage usage = streamCompletion(request);
 *     reservation.settle(usage.costMicros());
 * }
 * catch (RuntimeException ex) {
 *     reservation.release();
 *     throw ex;
 * }
 * </pre>
 *
 * When the store cannot answer, the budget's failure mode applies: closed
 * (the default for budgets) refuses the work, open lets it run unrecorded, and
 * local holds the reservation in an in-memory store. An in-memory store always
 * decides, even at its bound of keys, where new keys share the budget's
 * overflow slots (see {@link dev.ratelimit.core.KeyBound}).
 * <p>
 * A settle or release that cannot reach the store (its primary died after the
 * reservation, say) is kept in this instance and applied once the store
 * answers again (see {@link PendingWrites}), so the work's spend is
 * charged rather than forgotten when the reservation times out. A reservation
 * the store may have applied without telling (no answer in time, or not
 * confirmed durable in time: see {@link UnconfirmedWrite}) follows the failure
 * mode, and is released the same way so that it holds nothing.
 * {@link #close()} makes a last attempt.
 */
public final class CostBudgets implements AutoCloseable {

	private static final Logger logger = System.getLogger(CostBudgets.class.getName());

	private final BudgetStore store;

	private final @Nullable BudgetStore localFallback;

	private final LimitKeys keys;

	private final LimitListener listener;

	private final StoreHealth health;

	/** Settles and releases that could not reach the store, applied once it answers. */
	private final PendingWrites<Settlement> pending;

	/**
	 * Releases of reservations the store may have made without answering, kept
	 * apart from {@link #pending}: a slow store can time out many, and undoing
	 * them must never fill the bound that refuses new reservations. When full,
	 * a reservation's estimate returns when it times out.
	 */
	private final PendingWrites<Settlement> undone;

	/** Whether the warning that settlements are kept was written since the store last answered them. */
	private volatile boolean keepingWarned;

	/**
	 * Whether a failed extension was warned of since one last worked: one
	 * warning until extensions work again, as for every other failure of the
	 * store that is not an outage told of already; the rest at debug level.
	 */
	private volatile boolean extendingWarned;

	/**
	 * Creates the budgets.
	 * @param store where budget state lives
	 * @param localFallback the in-memory store of budgets with failure mode local
	 * while {@code store} fails, or {@code null}
	 * @param keys builds storage keys
	 */
	public CostBudgets(BudgetStore store, @Nullable BudgetStore localFallback, LimitKeys keys) {
		this(store, localFallback, keys, LimitListener.NONE);
	}

	/**
	 * Creates the budgets.
	 * @param store where budget state lives
	 * @param localFallback the in-memory store of budgets with failure mode local
	 * while {@code store} fails, or {@code null}
	 * @param keys builds storage keys
	 * @param listener hears reservations, fallbacks, costs charged and the store's health
	 */
	public CostBudgets(BudgetStore store, @Nullable BudgetStore localFallback, LimitKeys keys, LimitListener listener) {
		this.store = store;
		this.localFallback = localFallback;
		this.keys = keys;
		this.listener = listener;
		this.health = new StoreHealth(LimitKind.BUDGET, "Budget store", listener, store.parts());
		this.pending = new PendingWrites<>("budget-settlements", "budget settlement(s)", "their spend is charged",
				this::applyKept);
		this.undone = new PendingWrites<>("budget-undone-reservations", "release(s) of unanswered reservations",
				"their estimates are free", Settlement::apply);
	}

	/**
	 * Reserves an estimate against a budget.
	 * @param policy the budget
	 * @param key whose budget (a tenant, a user), or {@code null} when unresolved
	 * @param estimateMicros the estimate in micro-units
	 * @return the reservation, to settle or release
	 * @throws BudgetExceededException if the estimate does not fit
	 * @throws InvalidCostException if the estimate is negative or above an amount of the budget
	 * @throws RateLimitKeyMissingException if the key is missing
	 * @throws RateLimitBackendUnavailableException if the store fails and the budget fails closed
	 */
	public Reservation reserve(BudgetPolicy policy, @Nullable String key, long estimateMicros) {
		Attempt attempt = attempt(policy, key, estimateMicros);
		BudgetDecision decision;
		try {
			checkRoomForSettlements();
			decision = this.store.reserve(policy, attempt.storageKey(), attempt.id(), estimateMicros);
		}
		catch (RuntimeException ex) {
			return failed(attempt, ex);
		}
		return answered(attempt, decision);
	}

	/**
	 * Reserves an estimate like {@link #reserve}, without making the calling
	 * thread wait: for a caller that must never block (a reactive event loop).
	 * The store is asked without waiting for its reply (on Redis, Lettuce's
	 * asynchronous API; in memory, inline), and its answer or failure is handled
	 * as {@link #reserve} handles it.
	 * @param policy the budget
	 * @param key whose budget, or {@code null} when unresolved
	 * @param estimateMicros the estimate in micro-units
	 * @param blocking runs a store call that can only block
	 * @return the reservation; the stage fails with the exceptions {@link #reserve} throws
	 */
	public CompletionStage<Reservation> reserveAsync(BudgetPolicy policy, @Nullable String key, long estimateMicros,
			Executor blocking) {
		return AsyncCalls.started(() -> {
			Attempt attempt = attempt(policy, key, estimateMicros);
			if (this.pending.isFull()) {
				return CompletableFuture.completedFuture(failed(attempt, settlementsFull()));
			}
			return this.store.reserveAsync(policy, attempt.storageKey(), attempt.id(), estimateMicros, blocking)
				.handle((decision, failure) -> (failure == null) ? answered(attempt, decision)
						: failed(attempt, AsyncCalls.cause(failure)));
		});
	}

	/** Checks a reservation before the store is asked: its estimate, its key. */
	private Attempt attempt(BudgetPolicy policy, @Nullable String key, long estimateMicros) {
		checkEstimate(policy, estimateMicros);
		if (key == null) {
			throw new RateLimitKeyMissingException(policy.name(), policy.key());
		}
		return new Attempt(policy, storageKey(policy, key), UniqueIds.next(), estimateMicros,
				System.nanoTime());
	}

	/** What follows the store's answer, whichever way it was asked. */
	private Reservation answered(Attempt attempt, BudgetDecision decision) {
		this.listener.storeCalled(LimitKind.BUDGET, System.nanoTime() - attempt.startNanos(), true);
		this.health.answered(attempt.storageKey());
		this.pending.storeAnswered();
		this.undone.storeAnswered();
		return decided(attempt, decision, this.store, DecisionSource.STORE);
	}

	/** What follows the store's failure, whichever way it was asked: the budget's failure mode. */
	private Reservation failed(Attempt attempt, RuntimeException ex) {
		this.listener.storeCalled(LimitKind.BUDGET, System.nanoTime() - attempt.startNanos(), false);
		this.health.failed(attempt.storageKey(), ex);
		BudgetPolicy policy = attempt.policy();
		if (UnconfirmedWrite.in(ex)) {
			// The store holds the reservation, perhaps: released, so that it holds nothing for a refused call.
			Settlement release = new Settlement(this.store, policy, attempt.storageKey(), attempt.id(), 0, true);
			if (!this.undone.keep(release, AnnouncedOutage.in(ex))) {
				logger.log(Level.DEBUG, "Reservation " + attempt.id() + " of budget '" + policy.name() + "' got no "
						+ "answer and is not released (" + PendingWrites.MAX_PENDING + " wait already); its estimate "
						+ "returns when it times out");
			}
		}
		if (FailureModes.apply(policy, ex, this.localFallback != null,
				this.listener) == FailureModes.Fallback.UNENFORCED) {
			return unenforced(policy, attempt.storageKey(), attempt.id(), attempt.estimateMicros());
		}
		// Not unenforced: the policy falls back locally, which it does only with a local store.
		BudgetStore local = Objects.requireNonNull(this.localFallback, "a local fallback");
		BudgetDecision decision = local.reserve(policy, attempt.storageKey(), attempt.id(),
				attempt.estimateMicros());
		return decided(attempt, decision, local, DecisionSource.LOCAL_FALLBACK);
	}

	private Reservation decided(Attempt attempt, BudgetDecision decision, BudgetStore used, DecisionSource source) {
		BudgetPolicy policy = attempt.policy();
		tellDecided(attempt, decision, source);
		if (!decision.allowed()) {
			throw new BudgetExceededException(policy, decision, attempt.estimateMicros());
		}
		return new Reservation(this, policy, attempt.storageKey(), attempt.id(), attempt.estimateMicros(), decision,
				used);
	}

	/** Tells the listener of a reservation's decision, with what the budget's tightest limit has left. */
	private void tellDecided(Attempt attempt, BudgetDecision decision, DecisionSource source) {
		BudgetPolicy policy = attempt.policy();
		List<BudgetLimit> limits = policy.limits();
		long[] remaining = decision.remainingMicros();
		int tightest = 0;
		for (int i = 1; i < limits.size() && i < remaining.length; i++) {
			// remaining/amount compared without dividing: the one with the least share left
			if ((double) remaining[i] * limits.get(tightest).amountMicros()
					< (double) remaining[tightest] * limits.get(i).amountMicros()) {
				tightest = i;
			}
		}
		long left = (remaining.length == 0) ? -1 : remaining[tightest];
		long capacity = (remaining.length == 0) ? -1 : limits.get(tightest).amountMicros();
		this.listener.decided(policy, attempt.storageKey(), attempt.estimateMicros(), decision.allowed(), left,
				capacity, source);
	}

	/** A reservation about to be asked of the store, and when it was. */
	private record Attempt(BudgetPolicy policy, String storageKey, String id, long estimateMicros, long startNanos) {
	}

	/** A reservation held nowhere: the work runs and its cost is not recorded. */
	private Reservation unenforced(BudgetPolicy policy, String storageKey, String id, long estimateMicros) {
		return new Reservation(this, policy, storageKey, id, estimateMicros, null, null);
	}

	/**
	 * Reads a budget's state for a key.
	 * @param policy the budget
	 * @param key whose budget
	 * @return what is spent, reserved and remaining
	 */
	public BudgetDecision remaining(BudgetPolicy policy, String key) {
		return this.store.peek(policy, storageKey(policy, key));
	}

	/**
	 * Forgets a budget's state for a key: what it spent and what its live
	 * reservations hold, in the store and in the local fallback. Reservations
	 * still running settle against the fresh state. An operator's tool.
	 * @param policy the budget
	 * @param key whose budget
	 * @throws UnsupportedOperationException if the store cannot reset keys
	 */
	public void reset(BudgetPolicy policy, String key) {
		String storageKey = storageKey(policy, key);
		this.store.reset(policy, storageKey);
		if (this.localFallback != null) {
			this.localFallback.reset(policy, storageKey);
		}
	}

	@Nullable BudgetDecision settle(Reservation reservation, long actualMicros) {
		BudgetStore store = reservation.store();
		if (store == null) {
			return null;
		}
		try {
			BudgetDecision decision = store.settle(reservation.policy(), reservation.key(), reservation.id(),
					actualMicros);
			this.listener.charged(reservation.policy(), actualMicros);
			return decision;
		}
		catch (RuntimeException ex) {
			// The work is done and its cost known: kept, and charged once the store answers.
			this.health.failed(reservation.key(), ex);
			keep(new Settlement(store, reservation.policy(), reservation.key(),
					reservation.id(), actualMicros, false), ex);
			return reservation.decision();
		}
	}

	/**
	 * Keeps a settlement that could not reach its store: one warning until the
	 * store answers one again, the rest at debug level, and none during an
	 * outage the store told of already. When the keeper is full,
	 * says what is lost: the settle's lease returns its estimate at its timeout.
	 */
	private void keep(Settlement settlement, RuntimeException cause) {
		String what = (settlement.release() ? "release" : "settle") + " of reservation " + settlement.id()
				+ " of budget '" + settlement.policy().name() + "'";
		boolean announced = AnnouncedOutage.in(cause);
		if (!this.pending.keep(settlement, announced)) {
			logger.log(Level.ERROR, "Could not apply the " + what + ", and " + PendingWrites.MAX_PENDING
					+ " settlements wait already; its estimate returns when the reservation times out: "
					+ Causes.describe(cause));
			return;
		}
		// During an outage the store told of, keeping settlements is what its warning said would happen.
		if (!announced && !this.keepingWarned) {
			this.keepingWarned = true;
			logger.log(Level.WARNING, "Could not apply the " + what + "; it is kept in this instance and applied "
					+ "once the budget store answers again (further ones are logged at debug level): "
					+ Causes.describe(cause));
		}
		else {
			logger.log(Level.DEBUG, "Could not apply the " + what + "; kept: " + cause);
		}
	}

	/** Applies a kept settlement, on the keeper's thread. */
	private void applyKept(Settlement settlement) {
		settlement.apply();
		this.keepingWarned = false;
		if (!settlement.release()) {
			this.listener.charged(settlement.policy(), settlement.actualMicros());
		}
	}

	/**
	 * Refuses a reservation on the store while the kept settlements are at their
	 * bound: the failure mode applies, rather than a spend being forgotten.
	 */
	private void checkRoomForSettlements() {
		if (this.pending.isFull()) {
			throw settlementsFull();
		}
	}

	private static IllegalStateException settlementsFull() {
		return new IllegalStateException(PendingWrites.MAX_PENDING
				+ " budget settlements wait for the budget store to answer; no reservation is made on it until "
				+ "they are applied");
	}

	/**
	 * Returns how many settles and releases wait for the store to answer.
	 * @return the count
	 */
	public int pendingSettlements() {
		return this.pending.size();
	}

	/**
	 * Returns how many writes wait for the store to answer: the settles and
	 * releases {@link #pendingSettlements()} counts, and the releases of
	 * reservations that got no answer.
	 * @return the count
	 */
	public int pendingWrites() {
		return this.pending.size() + this.undone.size();
	}

	/**
	 * Makes a last attempt at the settlements kept, and stops their thread.
	 */
	@Override
	public void close() {
		List<Settlement> notUndone = this.undone.closed();
		if (!notUndone.isEmpty()) {
			logger.log(Level.INFO, notUndone.size() + " release(s) of reservations that got no answer could not be "
					+ "applied before shutdown; their estimates return when the reservations time out");
		}
		List<Settlement> lost = this.pending.closed();
		if (lost.isEmpty()) {
			return;
		}
		long micros = 0;
		for (Settlement settlement : lost) {
			micros += settlement.actualMicros();
		}
		logger.log(Level.ERROR, lost.size() + " budget settlement(s) could not be applied before shutdown; their "
				+ "spend (" + Amounts.format(micros) + " in all) is not charged and their estimates return when their "
				+ "reservations time out");
	}

	/**
	 * Extends a reservation in the store that holds it. A store that fails or
	 * cannot extend refuses: work then stops at what it holds, never spends
	 * unreserved. A reservation held nowhere (its budget not enforced) grows.
	 */
	boolean extend(Reservation reservation, long moreMicros) {
		BudgetStore store = reservation.store();
		if (store == null) {
			return true;
		}
		BudgetDecision decision;
		long start = System.nanoTime();
		try {
			decision = store.extend(reservation.policy(), reservation.key(), reservation.id(), moreMicros);
			this.listener.storeCalled(LimitKind.BUDGET, System.nanoTime() - start, true);
			if (this.extendingWarned) {
				this.extendingWarned = false;
			}
		}
		catch (UnsupportedOperationException ex) {
			return false;
		}
		catch (RuntimeException ex) {
			this.listener.storeCalled(LimitKind.BUDGET, System.nanoTime() - start, false);
			this.health.failed(reservation.key(), ex);
			boolean warn = !AnnouncedOutage.in(ex) && !this.extendingWarned;
			this.extendingWarned |= warn;
			logger.log(warn ? Level.WARNING : Level.DEBUG, "Could not extend reservation " + reservation.id()
					+ " of budget '" + reservation.policy().name() + "'; the stream stops at what it holds"
					+ (warn ? " (further ones are logged at debug level until one works): " : ": ") + ex);
			return false;
		}
		return decision.allowed();
	}

	@Nullable BudgetDecision release(Reservation reservation) {
		BudgetStore store = reservation.store();
		if (store == null) {
			return null;
		}
		try {
			return store.release(reservation.policy(), reservation.key(), reservation.id());
		}
		catch (RuntimeException ex) {
			// Kept, so that the estimate returns when the store answers, not when the reservation times out.
			this.health.failed(reservation.key(), ex);
			keep(new Settlement(store, reservation.policy(), reservation.key(),
					reservation.id(), 0, true), ex);
			return reservation.decision();
		}
	}

	private String storageKey(BudgetPolicy policy, String key) {
		return this.keys.build("budget:" + policy.name(), key);
	}

	private static void checkEstimate(BudgetPolicy policy, long estimateMicros) {
		if (estimateMicros < 0) {
			throw new InvalidCostException(policy.name(), "Estimate " + Amounts.format(estimateMicros)
					+ " for budget '" + policy.name() + "' is negative");
		}
		for (BudgetLimit limit : policy.limits()) {
			if (estimateMicros > limit.amountMicros()) {
				throw new InvalidCostException(policy.name(),
						"Estimate " + Amounts.format(estimateMicros) + " " + policy.unit() + " exceeds the "
								+ limit.label() + " amount " + Amounts.format(limit.amountMicros()) + " of budget '"
								+ policy.name() + "' and can never succeed");
			}
		}
	}

	/**
	 * Returns whether reserving or settling may block the calling thread (its
	 * store waits on I/O): a caller on an event loop then reserves with
	 * {@link #reserveAsync}, and settles or releases off its thread.
	 * @return whether a call may block
	 */
	public boolean mayBlock() {
		return this.store.blocks();
	}

}

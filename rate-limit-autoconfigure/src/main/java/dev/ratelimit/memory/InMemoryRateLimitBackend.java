package dev.ratelimit.memory;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.KeyedStates;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitState;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Take;
import dev.ratelimit.core.TimeSource;

/**
 * Keeps limiter state in this process: the embedded default, exact for one
 * instance. The keys, their locks, their bound and the overflow slots are
 * {@link KeyedStates}; this class takes the decisions on them. Callers only
 * contend when they share a key; a layered decision locks its states in
 * {@link KeyedStates#LOCK_ORDER}, so two such decisions cannot deadlock.
 * <p>
 * Memory is bounded without ever forgetting a limit that still matters (see
 * {@link KeyBound}): a key is dropped only once it has been idle long enough
 * that forgetting it changes nothing (its bucket would be full, its windows
 * over), and each policy keeps at most {@code maxKeys} keys. When a policy holds
 * that many keys that still matter, a new key is decided on one of the policy's
 * overflow slots, a bucket or window of the policy shared by the new keys that
 * land on it: such a key may be refused early, never admitted beyond the
 * policy's limit. The keys already held, an exhausted caller's among them, stay
 * exactly as they are. Evicting the least recently used instead would let a
 * flood of fresh keys reset everybody's buckets; refusing newcomers would hand
 * them to the failure mode, unlimited under {@code open}.
 * <p>
 * A decision on a known key costs one map read, one clock read and the key's
 * lock, and allocates nothing. The key's state is its {@link KeyedStates.Entry}:
 * the lock and the fields a decision writes are one object.
 */
public final class InMemoryRateLimitBackend implements RateLimitBackend {

	private static final MethodHandle LOCK;

	static {
		try {
			LOCK = MethodHandles.publicLookup()
				.findVirtual(KeyedStates.class, "lock",
						MethodType.methodType(KeyedStates.Entry.class, Limit.class, String.class, long.class));
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	/** Marks the receipt of units taken on an overflow slot, which are given back to that slot. */
	private static final String OVERFLOW_RECEIPT = "overflow:";

	private final TimeSource time;

	private final KeyedStates<RateLimitPolicy, LimitState> states;

	/**
	 * {@link KeyedStates#lock}, called through a handle that the JIT cannot see
	 * through. Inlined, the map look-up alone would take {@link #tryConsume} past
	 * the machine code size (C2's {@code InlineSmallCode}, 2500 bytes) up to
	 * which it is still inlined into its caller once compiled; out of line, it
	 * stays under it, so the caller's escape analysis can remove the
	 * {@link Decision}: no allocation per decision, for a few nanoseconds of
	 * call. An instance field on purpose: C2 treats a static final handle as a
	 * constant and would inline through it.
	 */
	private final MethodHandle lock;

	/**
	 * Creates a backend.
	 * @param time the clock
	 * @param maxKeys the most keys kept per policy
	 */
	public InMemoryRateLimitBackend(TimeSource time, long maxKeys) {
		this(time, new KeyBound(maxKeys));
	}

	/**
	 * Creates a backend.
	 * @param time the clock
	 * @param bound the most keys kept per policy, its overflow slots, and the
	 * count of drops and overflow decisions
	 */
	public InMemoryRateLimitBackend(TimeSource time, KeyBound bound) {
		this.time = time;
		this.states = new KeyedStates<>(LimitState::create, bound, time.currentTimeMicros());
		this.lock = LOCK;
	}

	@Override
	public Decision tryConsume(RateLimitPolicy policy, String key, long cost) {
		long now = this.time.currentTimeMicros();
		// Worked out before the lock is taken: what the lock guards is the state, not the arithmetic.
		long freshAt = freshAfterUse(policy, now);
		LimitState state;
		try {
			state = locked(this.lock, this.states, policy, key, now);
		}
		catch (Throwable ex) {
			// lock throws nothing checked: rethrow what it threw, unwrapped.
			throw sneakyThrow(ex);
		}
		try {
			state.freshNoEarlierThan(freshAt);
			return state.decide(policy, cost, now, true);
		}
		finally {
			state.unlock();
		}
	}

	private static LimitState locked(MethodHandle lock, KeyedStates<RateLimitPolicy, LimitState> states,
			RateLimitPolicy policy, String key, long now) throws Throwable {
		return (LimitState) (KeyedStates.Entry) lock.invokeExact(states, (Limit) policy, key, now);
	}

	/**
	 * Returns from when forgetting a key used now changes no decision: a key is
	 * kept for that long after its use.
	 */
	private static long freshAfterUse(RateLimitPolicy policy, long now) {
		// In wait mode a bucket may be owed up to max-wait beyond empty, which takes that long more to repay.
		return now + policy.idleMicros() + policy.maxWaitMicros();
	}

	@Override
	public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
		if (acquisitions.size() == 1) {
			Acquisition only = acquisitions.get(0);
			return List.of(tryConsume(only.policy(), only.key(), only.cost()));
		}
		return decideAll(acquisitions, this.time.currentTimeMicros(), null);
	}

	/**
	 * Decides like {@link #tryConsumeAll}; the receipt of what an allowed
	 * acquisition took is {@link LimitState#receipt}, taken under the key's lock.
	 */
	@Override
	public List<Take> tryTakeAll(List<Acquisition> acquisitions) {
		String[] receipts = new String[acquisitions.size()];
		List<Decision> decisions = decideAll(acquisitions, this.time.currentTimeMicros(), receipts);
		Take[] takes = new Take[decisions.size()];
		for (int i = 0; i < takes.length; i++) {
			Decision decision = decisions.get(i);
			boolean took = decision.allowed() && acquisitions.get(i).cost() > 0;
			takes[i] = new Take(decision, took ? receipts[i] : null);
		}
		return List.of(takes);
	}

	/**
	 * Gives back to the state the units were taken from, if it still has them:
	 * the key's own, if it still has one (a key is only forgotten once nothing it
	 * counted matters, so then there is nothing to give back), or the overflow
	 * slot the receipt names, never the other: a key may have moved between the
	 * two since.
	 */
	@Override
	public void giveBack(RateLimitPolicy policy, String key, long cost, String receipt) {
		boolean onSlot = receipt.startsWith(OVERFLOW_RECEIPT);
		long takenAt = Long.parseLong(onSlot ? receipt.substring(OVERFLOW_RECEIPT.length()) : receipt);
		LimitState state = onSlot ? this.states.lockSlotIfPresent(policy, key) : this.states.lockIfPresent(key);
		if (state == null) {
			return;
		}
		try {
			state.giveBack(policy, cost, takenAt, this.time.currentTimeMicros());
		}
		finally {
			state.unlock();
		}
	}

	/**
	 * Decides several policies all or nothing.
	 * @param receipts where to put each acquisition's receipt when all allow, or
	 * {@code null}
	 */
	private List<Decision> decideAll(List<Acquisition> acquisitions, long now, String @Nullable [] receipts) {
		while (true) {
			LimitState[] byIndex = new LimitState[acquisitions.size()];
			for (int i = 0; i < byIndex.length; i++) {
				Acquisition acquisition = acquisitions.get(i);
				byIndex[i] = this.states.entry(acquisition.policy(), acquisition.key(), now);
			}
			LimitState[] lockOrder = byIndex.clone();
			Arrays.sort(lockOrder, KeyedStates.LOCK_ORDER);
			int locked = 0;
			try {
				for (; locked < lockOrder.length; locked++) {
					// The lock is not reentrant: an entry named twice (or a slot two keys share) is locked once.
					if (locked == 0 || lockOrder[locked] != lockOrder[locked - 1]) {
						lockOrder[locked].lock();
					}
				}
				if (allCurrent(byIndex, acquisitions)) {
					return decideLocked(byIndex, acquisitions, now, receipts);
				}
				// An entry was removed, or a key got one of its own, between the look-up and the lock: look again.
			}
			finally {
				for (int i = locked - 1; i >= 0; i--) {
					if (i == 0 || lockOrder[i] != lockOrder[i - 1]) {
						lockOrder[i].unlock();
					}
				}
			}
		}
	}

	private boolean allCurrent(LimitState[] byIndex, List<Acquisition> acquisitions) {
		for (int i = 0; i < byIndex.length; i++) {
			if (!this.states.isCurrent(acquisitions.get(i).key(), byIndex[i])) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Decides all or nothing, with every entry's lock held.
	 */
	private static List<Decision> decideLocked(LimitState[] byIndex, List<Acquisition> acquisitions, long now,
			String @Nullable [] receipts) {
		Decision[] decisions = new Decision[byIndex.length];
		boolean allAllowed = true;
		for (int i = 0; i < decisions.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			RateLimitPolicy policy = acquisition.policy();
			byIndex[i].freshNoEarlierThan(freshAfterUse(policy, now));
			// Two keys of one call on one overflow slot take from it together: check what they take in all.
			long together = costOnSameState(byIndex, acquisitions, i);
			decisions[i] = byIndex[i].decide(policy, Math.min(together, policy.capacity()), now, false);
			if (together > policy.capacity()) {
				decisions[i] = denied(decisions[i]);
			}
			allAllowed &= decisions[i].allowed();
		}
		for (int i = 0; i < decisions.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			if (allAllowed) {
				decisions[i] = byIndex[i].decide(acquisition.policy(), acquisition.cost(), now, true);
				if (receipts != null) {
					receipts[i] = receipt(byIndex[i], acquisition, now);
				}
			}
			else if (decisions[i].allowed()) {
				// Nothing is taken when another policy denies: report the state as it stays.
				decisions[i] = byIndex[i].decide(acquisition.policy(), 0, now, false);
			}
		}
		return List.of(decisions);
	}

	private static long costOnSameState(LimitState[] byIndex, List<Acquisition> acquisitions, int i) {
		long cost = 0;
		for (int j = 0; j < byIndex.length; j++) {
			if (byIndex[j] == byIndex[i]) {
				cost += acquisitions.get(j).cost();
			}
		}
		return cost;
	}

	private static Decision denied(Decision decision) {
		return new Decision(false, decision.remaining(), decision.limit(), decision.resetAfterMicros(),
				Math.max(1, decision.retryAfterMicros()));
	}

	private static String receipt(LimitState state, Acquisition acquisition, long now) {
		String taken = Long.toString(state.receipt(acquisition.policy(), acquisition.cost(), now));
		return state.isOverflow() ? OVERFLOW_RECEIPT + taken : taken;
	}

	/**
	 * Reads what the key's next decision would see: its own state, or its
	 * overflow slot's (other keys' use included), or a fresh one.
	 */
	@Override
	public Decision peek(RateLimitPolicy policy, String key) {
		long now = this.time.currentTimeMicros();
		LimitState state = this.states.lockToRead(policy, key);
		if (state == null) {
			// An unknown key reads as a fresh one, which is what it would start as.
			return LimitState.create(policy, now).decide(policy, 0, now, false);
		}
		try {
			return state.decide(policy, 0, now, false);
		}
		finally {
			state.unlock();
		}
	}

	@Override
	public void reset(RateLimitPolicy policy, String key) {
		this.states.remove(key);
	}

	@SuppressWarnings("unchecked")
	private static <E extends Throwable> RuntimeException sneakyThrow(Throwable ex) throws E {
		throw (E) ex;
	}

	/**
	 * Returns the number of keys currently held, after dropping idle ones (an
	 * estimate while other threads run).
	 * @return the number of keys
	 */
	public long size() {
		return this.states.size(this.time.currentTimeMicros());
	}

	/** @return {@code false}: decisions are taken in this process's memory, without I/O */
	@Override
	public boolean blocks() {
		return false;
	}

}

package dev.ratelimit.core;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * The most keys an in-process store keeps per policy, and what the store did
 * at the bound. Shared by the three in-memory stores (rate limits, budgets,
 * concurrency caps), which follow one rule with it:
 * <ul>
 * <li>A store drops a key only when its state equals a fresh one (a full
 * bucket, an ended window, a budget whose windows and reservations are over, a
 * cap with no call in flight): forgetting it changes no decision.</li>
 * <li>A key that still matters is never dropped to make room. Forgetting it
 * would hand its caller a fresh quota, so a flood of new keys could reset
 * anybody's limit.</li>
 * <li>When a policy holds its bound of such keys, a new key is decided on one
 * of the policy's {@link #overflowSlots() overflow slots}, chosen by a secret
 * hash of the key: a state of the policy's own, with its own limit, shared by
 * every new key that lands on it. A newcomer may then be refused early (its
 * slot's other keys spent the limit) but is never admitted beyond the limit,
 * whatever the failure mode: a flood of fresh keys makes nobody unlimited.</li>
 * <li>Each policy counts its own keys, so one policy's keys (those an attacker
 * can mint freely, say) never crowd out another's.</li>
 * </ul>
 * Counting is lock-free: a store takes room before it inserts a key and gives
 * it back when the key leaves, so the bound holds exactly, whatever the threads.
 * The first decision a policy takes on an overflow slot is logged at warning
 * level, once per policy and store; every one is counted.
 */
public final class KeyBound {

	/** Overflow slots per policy unless told otherwise. */
	public static final int DEFAULT_OVERFLOW_SLOTS = 1024;

	/** The most overflow slots a policy may have. */
	public static final int MAX_OVERFLOW_SLOTS = 1 << 20;

	private static final Logger logger = System.getLogger(KeyBound.class.getName());

	private final long maxKeysPerPolicy;

	private final int overflowSlots;

	private final @Nullable String boundProperty;

	private final ConcurrentHashMap<String, Keys> byPolicy = new ConcurrentHashMap<>();

	private final LongAdder dropped = new LongAdder();

	private volatile Consumer<Keys> overflowObserver = (keys) -> {
	};

	/**
	 * Creates a bound with {@link #DEFAULT_OVERFLOW_SLOTS} overflow slots per policy.
	 * @param maxKeysPerPolicy the most keys kept per policy
	 * @throws IllegalArgumentException if the bound is not positive
	 */
	public KeyBound(long maxKeysPerPolicy) {
		this(maxKeysPerPolicy, DEFAULT_OVERFLOW_SLOTS, null);
	}

	/**
	 * Creates a bound.
	 * @param maxKeysPerPolicy the most keys kept per policy
	 * @param overflowSlots the states per policy that new keys share at the bound
	 * @param boundProperty the setting that raises the bound, named in the
	 * warning of a first overflow, or {@code null}
	 * @throws IllegalArgumentException if the bound is not positive or the slots
	 * are outside 1..{@link #MAX_OVERFLOW_SLOTS}
	 */
	public KeyBound(long maxKeysPerPolicy, int overflowSlots, @Nullable String boundProperty) {
		if (maxKeysPerPolicy <= 0) {
			throw new IllegalArgumentException("maximum number of keys must be positive, was " + maxKeysPerPolicy);
		}
		if (overflowSlots < 1 || overflowSlots > MAX_OVERFLOW_SLOTS) {
			throw new IllegalArgumentException(
					"overflow slots must be between 1 and " + MAX_OVERFLOW_SLOTS + ", was " + overflowSlots);
		}
		this.maxKeysPerPolicy = maxKeysPerPolicy;
		this.overflowSlots = overflowSlots;
		this.boundProperty = boundProperty;
	}

	/**
	 * Returns the key count of a policy, created on first use.
	 * @param policy the policy name
	 * @return its count
	 */
	public Keys of(String policy) {
		Keys keys = this.byPolicy.get(policy);
		return (keys != null) ? keys : this.byPolicy.computeIfAbsent(policy, Keys::new);
	}

	/** @return the most keys kept per policy */
	public long maxKeysPerPolicy() {
		return this.maxKeysPerPolicy;
	}

	/** @return the states per policy that new keys share once the policy holds its bound */
	public int overflowSlots() {
		return this.overflowSlots;
	}

	/** @return the keys held, over every policy */
	public long keys() {
		long total = 0;
		for (Keys keys : this.byPolicy.values()) {
			total += keys.count.get();
		}
		return total;
	}

	/** @return how many keys were dropped because their state was fresh again */
	public long dropped() {
		return this.dropped.sum();
	}

	/**
	 * Sets what to call the first time a policy decides on an overflow slot,
	 * for metrics; called at once for the policies that already have.
	 * @param observer receives the policy's keys, whose
	 * {@link Keys#overflowDecisions()} count on
	 */
	public void onOverflow(Consumer<Keys> observer) {
		this.overflowObserver = observer;
		this.byPolicy.values().stream().filter(Keys::hasOverflowed).forEach(observer);
	}

	/**
	 * The keys of one policy in one store.
	 */
	public final class Keys {

		private final String policy;

		private final AtomicLong count = new AtomicLong();

		private final LongAdder overflowDecisions = new LongAdder();

		private final AtomicBoolean overflowed = new AtomicBoolean();

		private Keys(String policy) {
			this.policy = policy;
		}

		/** @return the policy's name */
		public String policy() {
			return this.policy;
		}

		/**
		 * Takes room for a new key.
		 * @return whether the policy was under its bound; when not, nothing was taken
		 */
		public boolean tryAdd() {
			if (this.count.incrementAndGet() <= KeyBound.this.maxKeysPerPolicy) {
				return true;
			}
			this.count.decrementAndGet();
			return false;
		}

		/**
		 * Gives back the room of a key that left the store for another reason than
		 * being fresh again (an operator's reset, or a lost race to insert it).
		 */
		public void removed() {
			this.count.decrementAndGet();
		}

		/**
		 * Gives back the room of a key dropped because its state equals a fresh one.
		 */
		public void dropped() {
			this.count.decrementAndGet();
			KeyBound.this.dropped.increment();
		}

		/**
		 * Counts a decision taken on an overflow slot; the first one is logged and
		 * told to the observer.
		 * @param limit the policy
		 */
		void overflowed(Limit limit) {
			this.overflowDecisions.increment();
			if (!this.overflowed.get() && this.overflowed.compareAndSet(false, true)) {
				String property = (KeyBound.this.boundProperty != null) ? KeyBound.this.boundProperty
						: "the store's bound of keys";
				logger.log(Level.WARNING, "In-memory store of " + limit.kind().label() + " '" + this.policy
						+ "' holds " + KeyBound.this.maxKeysPerPolicy + " keys that still matter, its bound ("
						+ property + "): new keys now share " + KeyBound.this.overflowSlots
						+ " overflow slots, each limited like one key of the policy, so that some new callers may be "
						+ "refused early and none passes the limit. Raise " + property
						+ " if this many keys are normal traffic (logged once per policy)");
				KeyBound.this.overflowObserver.accept(this);
			}
		}

		/** @return whether the policy has decided on an overflow slot */
		boolean hasOverflowed() {
			return this.overflowed.get();
		}

		/** @return the decisions taken on the policy's overflow slots */
		public long overflowDecisions() {
			return this.overflowDecisions.sum();
		}

		/** @return the keys of this policy held now */
		public long count() {
			return this.count.get();
		}

	}

}

package dev.ratelimit.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

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
 * anybody's limit. When a policy holds its bound of such keys, a new key is
 * refused with {@link TooManyKeysException} and the policy's failure mode
 * applies to that call.</li>
 * <li>Each policy counts its own keys, so one policy's keys (those an attacker
 * can mint freely, say) never crowd out another's.</li>
 * </ul>
 * Counting is lock-free: a store takes a slot before it inserts a key and gives
 * it back when the key leaves, so the bound holds exactly, whatever the threads.
 */
public final class KeyBound {

	private final long maxKeysPerPolicy;

	private final ConcurrentHashMap<String, Keys> byPolicy = new ConcurrentHashMap<>();

	private final LongAdder dropped = new LongAdder();

	private final LongAdder refused = new LongAdder();

	/**
	 * Creates a bound.
	 * @param maxKeysPerPolicy the most keys kept per policy
	 * @throws IllegalArgumentException if the bound is not positive
	 */
	public KeyBound(long maxKeysPerPolicy) {
		if (maxKeysPerPolicy <= 0) {
			throw new IllegalArgumentException("maximum number of keys must be positive, was " + maxKeysPerPolicy);
		}
		this.maxKeysPerPolicy = maxKeysPerPolicy;
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

	/** @return how many new keys were refused at the bound */
	public long refused() {
		return this.refused.sum();
	}

	/**
	 * The keys of one policy in one store.
	 */
	public final class Keys {

		private final String policy;

		private final AtomicLong count = new AtomicLong();

		private Keys(String policy) {
			this.policy = policy;
		}

		/**
		 * Takes a slot for a new key.
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
		 * Takes a slot for a new key whatever the bound: for state that must be kept
		 * even at the bound, such as the spend of a settle whose reservation outlived
		 * its key. Such keys are few (bounded by the calls in flight).
		 */
		public void add() {
			this.count.incrementAndGet();
		}

		/**
		 * Gives back the slot of a key that left the store for another reason than
		 * being fresh again (an operator's reset, or a lost race to insert it).
		 */
		public void removed() {
			this.count.decrementAndGet();
		}

		/**
		 * Gives back the slot of a key dropped because its state equals a fresh one.
		 */
		public void dropped() {
			this.count.decrementAndGet();
			KeyBound.this.dropped.increment();
		}

		/**
		 * Counts a refused key and returns the exception to throw.
		 * @return the exception
		 */
		public TooManyKeysException refuse() {
			KeyBound.this.refused.increment();
			return new TooManyKeysException(this.policy, KeyBound.this.maxKeysPerPolicy);
		}

		/** @return the keys of this policy held now */
		public long count() {
			return this.count.get();
		}

	}

}

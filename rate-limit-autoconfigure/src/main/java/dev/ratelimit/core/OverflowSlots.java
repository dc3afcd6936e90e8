package dev.ratelimit.core;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;

/**
 * One policy's key count and overflow slots in one {@link KeyedStates}: the
 * states its new keys share once it holds its bound. The array is allocated at
 * the policy's first overflow, each slot's state on its first use, so a policy
 * that never reaches its bound costs one small object.
 * <p>
 * Once the policy has slots, {@link KeyedStates} adds its keys only under a
 * slot's lock. Before, it adds them without one, counted here as unguarded; the
 * first overflow waits for those under way ({@link #awaitUnguarded}), so that a
 * key added without the lock cannot also be decided on its slot.
 *
 * @param <E> the state type
 */
final class OverflowSlots<E extends KeyedStates.Entry> {

	private static final int SPINS = 100;

	final KeyBound.Keys keys;

	/** Keys being added without a slot's lock: only around the policy's first overflow. */
	private final AtomicInteger unguarded = new AtomicInteger();

	/** {@code null} until the policy first overflows, then never again. */
	private volatile AtomicReferenceArray<E> slots;

	OverflowSlots(KeyBound.Keys keys) {
		this.keys = keys;
	}

	/**
	 * Counts an add without a slot's lock in, if the policy has no slots yet;
	 * the caller then counts it out with {@link #endUnguarded}.
	 * @return whether the add may go ahead without a slot's lock
	 */
	boolean beginUnguarded() {
		if (this.slots != null) {
			return false;
		}
		this.unguarded.incrementAndGet();
		// Checked again after counting in: a first overflow that allocated the slots meanwhile waits for us.
		if (this.slots != null) {
			this.unguarded.decrementAndGet();
			return false;
		}
		return true;
	}

	void endUnguarded() {
		this.unguarded.decrementAndGet();
	}

	/**
	 * Waits for the adds without a slot's lock under way. Each counted itself in
	 * before it looked for slots, so once none is under way every later one sees
	 * them.
	 */
	void awaitUnguarded() {
		for (int spins = 0; this.unguarded.get() != 0; spins++) {
			if (spins < SPINS) {
				Thread.onSpinWait();
			}
			else {
				Thread.yield();
			}
		}
	}

	synchronized void allocate(int count) {
		if (this.slots == null) {
			this.slots = new AtomicReferenceArray<>(count);
		}
	}

	/** @return how many slots the policy has, 0 before its first overflow */
	int count() {
		AtomicReferenceArray<E> slots = this.slots;
		return (slots != null) ? slots.length() : 0;
	}

	/**
	 * Returns a slot's state if it has one.
	 * @param index the slot, below {@link #count()}
	 * @return its state, or {@code null}
	 */
	E get(int index) {
		return this.slots.get(index);
	}

	/**
	 * Returns a slot's state, creating it on first use.
	 * @param index the slot, below {@link #count()}
	 * @param created creates a fresh state from the policy
	 * @return its state
	 */
	E getOrCreate(int index, Supplier<E> created) {
		E slot = this.slots.get(index);
		if (slot == null) {
			E fresh = created.get();
			fresh.owner = this.keys;
			fresh.slot = index;
			slot = this.slots.compareAndExchange(index, null, fresh);
			if (slot == null) {
				slot = fresh;
			}
		}
		return slot;
	}

}

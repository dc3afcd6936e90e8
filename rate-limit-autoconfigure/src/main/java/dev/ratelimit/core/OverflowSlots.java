package dev.ratelimit.core;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

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
	private volatile @Nullable AtomicReferenceArray<E> slots;

	/**
	 * Per slot, a Bloom filter of the keys decided on it since it was last fresh
	 * ({@link #USED_BITS} bits, two per key), allocated at the slot's first such
	 * key; read and written with the slot's lock held. A key it may contain
	 * stays on the slot while the slot's state matters (its own entry would hand
	 * it its limit again); a key it surely does not contain never spent there,
	 * and may have an entry of its own as soon as the policy has room, so the
	 * slots drain once a flood stops. A false positive only keeps a newcomer on
	 * a slot, which may refuse it early, never admit it beyond its limit.
	 */
	private volatile @Nullable AtomicReferenceArray<long[]> used;

	/** Bits of each slot's filter of the keys that used it: 128 bytes per slot. */
	static final int USED_BITS = 1024;

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
			// The filters first: a thread that sees the slots sees them too.
			this.used = new AtomicReferenceArray<>(count);
			this.slots = new AtomicReferenceArray<>(count);
		}
	}

	/**
	 * Returns whether a key may have been decided on its slot since the slot was
	 * last fresh. Call with the slot's lock held.
	 * @param index the key's slot
	 * @param hash the key's hash, as the slot was chosen by
	 * @return {@code false} if the key surely was not
	 */
	boolean mayHaveUsed(int index, long hash) {
		long[] bits = used().get(index);
		return bits != null && isSet(bits, firstBit(hash)) && isSet(bits, secondBit(hash));
	}

	/**
	 * Records that a key is decided on its slot. Call with the slot's lock held.
	 * @param index the key's slot
	 * @param hash the key's hash
	 */
	void markUsed(int index, long hash) {
		AtomicReferenceArray<long[]> used = used();
		long[] bits = used.get(index);
		if (bits == null) {
			bits = new long[USED_BITS / Long.SIZE];
			used.set(index, bits);
		}
		set(bits, firstBit(hash));
		set(bits, secondBit(hash));
	}

	/**
	 * Forgets which keys used a slot, once its state is fresh again: what they
	 * spent there is spent no more. Call with the slot's lock held.
	 * @param index the slot
	 */
	void clearUsed(int index) {
		long[] bits = used().get(index);
		if (bits != null) {
			Arrays.fill(bits, 0L);
		}
	}

	// The slot is chosen by the hash's remainder, mostly its low bits: the filter's bits come from its high ones.

	private static int firstBit(long hash) {
		return (int) (hash >>> 54);
	}

	private static int secondBit(long hash) {
		return (int) (hash >>> 44) & (USED_BITS - 1);
	}

	private static boolean isSet(long[] bits, int bit) {
		return (bits[bit >>> 6] & (1L << bit)) != 0;
	}

	private static void set(long[] bits, int bit) {
		bits[bit >>> 6] |= 1L << bit;
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
	@Nullable E get(int index) {
		return slots().get(index);
	}

	/**
	 * Returns a slot's state, creating it on first use.
	 * @param index the slot, below {@link #count()}
	 * @param created creates a fresh state from the policy
	 * @return its state
	 */
	E getOrCreate(int index, Supplier<E> created) {
		AtomicReferenceArray<E> slots = slots();
		E slot = slots.get(index);
		if (slot == null) {
			E fresh = created.get();
			fresh.owner = this.keys;
			fresh.slot = index;
			slot = slots.compareAndExchange(index, null, fresh);
			if (slot == null) {
				slot = fresh;
			}
		}
		return slot;
	}

	/** The slots of a policy that overflowed: a slot index is below {@link #count()}, so they are allocated. */
	private AtomicReferenceArray<E> slots() {
		return Objects.requireNonNull(this.slots, "slots are allocated at the policy's first overflow");
	}

	/** The filters, allocated with the slots, before them. */
	private AtomicReferenceArray<long[]> used() {
		return Objects.requireNonNull(this.used, "filters are allocated at the policy's first overflow");
	}

}

package dev.ratelimit.insight;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The weighted Space-Saving sketch (Metwally, Agrawal and El Abbadi, 2005):
 * the heaviest keys of a stream in fixed memory, whatever the number of keys.
 * It tracks at most {@code capacity} keys; a key not tracked takes the place of
 * the lightest one and inherits its count as its possible overestimate
 * ({@code error}). Every key heavier than the lightest tracked count is
 * tracked, and a tracked count overstates the truth by at most its error,
 * never understates it.
 * <p>
 * Adding allocates nothing: the keys sit in arrays indexed by an
 * open-addressing table, and a key taking a place keeps the caller's string.
 * A hit is a table probe and an add; a miss also scans the tracked counts for
 * the lightest (at most {@code capacity}, fixed). Not thread-safe: its owner
 * holds a lock.
 */
final class SpaceSaving {

	private final String[] keys;

	private final long[] counts;

	private final long[] errors;

	/**
	 * Each entry's spread hash: probes and moves compare and place by it without
	 * reading the tracked string (a cache miss per key on a flood of keys).
	 */
	private final int[] hashes;

	/** Open addressing by the key's hash: each slot holds an entry's index + 1, or 0 when empty. */
	private final int[] table;

	private final int mask;

	private int size;

	SpaceSaving(int capacity) {
		if (capacity < 1) {
			throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
		}
		this.keys = new String[capacity];
		this.counts = new long[capacity];
		this.errors = new long[capacity];
		this.hashes = new int[capacity];
		// A quarter full at most: probes stay short.
		int slots = Integer.highestOneBit(capacity * 4 - 1) << 1;
		this.table = new int[slots];
		this.mask = slots - 1;
	}

	/**
	 * Counts a weight for a key.
	 * @param key the key, kept by reference when it takes a place
	 * @param weight how much to add, positive
	 */
	void add(String key, long weight) {
		int hash = spread(key.hashCode());
		int slot = slotOf(key, hash);
		int entry = this.table[slot] - 1;
		if (entry >= 0) {
			this.counts[entry] += weight;
			return;
		}
		if (this.size < this.keys.length) {
			place(this.size++, slot, key, hash, weight, 0);
			return;
		}
		int lightest = lightest();
		long floor = this.counts[lightest];
		unlink(slotOf(this.keys[lightest], this.hashes[lightest]));
		// The slot found above may have moved while unlinking: look again.
		place(lightest, slotOf(key, hash), key, hash, floor + weight, floor);
	}

	/** Forgets every key. */
	void clear() {
		Arrays.fill(this.keys, null);
		Arrays.fill(this.table, 0);
		this.size = 0;
	}

	/**
	 * Adds this sketch's tracked keys into a tally (for reading, not on a
	 * decision's path).
	 * @param tally counts and errors by key
	 */
	void addTo(Tally tally) {
		for (int i = 0; i < this.size; i++) {
			tally.add(this.keys[i], this.counts[i], this.errors[i]);
		}
	}

	/** @return the keys tracked, with their counts and errors, heaviest first */
	List<HeavyHitters.Count> entries() {
		List<HeavyHitters.Count> entries = new ArrayList<>(this.size);
		for (int i = 0; i < this.size; i++) {
			entries.add(new HeavyHitters.Count(this.keys[i], this.counts[i], this.errors[i]));
		}
		entries.sort(Tally.HEAVIEST_FIRST);
		return entries;
	}

	private void place(int entry, int slot, String key, int hash, long count, long error) {
		this.keys[entry] = key;
		this.hashes[entry] = hash;
		this.counts[entry] = count;
		this.errors[entry] = error;
		this.table[slot] = entry + 1;
	}

	private int lightest() {
		int lightest = 0;
		for (int i = 1; i < this.size; i++) {
			if (this.counts[i] < this.counts[lightest]) {
				lightest = i;
			}
		}
		return lightest;
	}

	/** The slot holding the key, or the empty slot where it would go. */
	private int slotOf(String key, int hash) {
		int slot = hash & this.mask;
		while (true) {
			int entry = this.table[slot] - 1;
			if (entry < 0 || (this.hashes[entry] == hash && this.keys[entry].equals(key))) {
				return slot;
			}
			slot = (slot + 1) & this.mask;
		}
	}

	/** Empties a slot, moving later entries of the same probe run back so that every key stays findable. */
	private void unlink(int slot) {
		int hole = slot;
		int next = (hole + 1) & this.mask;
		while (this.table[next] != 0) {
			int home = this.hashes[this.table[next] - 1] & this.mask;
			// The entry may fill the hole unless its home lies cyclically after the hole, up to it.
			if (((next - home) & this.mask) >= ((next - hole) & this.mask)) {
				this.table[hole] = this.table[next];
				hole = next;
			}
			next = (next + 1) & this.mask;
		}
		this.table[hole] = 0;
	}

	private static int spread(int hash) {
		// String hashes of similar keys differ in their low bits little: mix the high ones in.
		int h = hash * 0x9E3779B9;
		return h ^ (h >>> 16);
	}

}

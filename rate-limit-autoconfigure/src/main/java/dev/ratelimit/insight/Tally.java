package dev.ratelimit.insight;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Counts by key summed from several sketches (two windows, several
 * instances), for reading: the sum of Space-Saving summaries is a summary of
 * the combined stream whose errors add up too.
 */
final class Tally {

	/** Heaviest first; equal counts by key, so that a listing is stable. */
	static final Comparator<HeavyHitters.Count> HEAVIEST_FIRST = Comparator.comparingLong(HeavyHitters.Count::count)
		.reversed()
		.thenComparing(HeavyHitters.Count::key);

	private final Map<String, long[]> counts = new HashMap<>();

	/**
	 * Adds a count for a key.
	 * @param key the key
	 * @param count its count
	 * @param error how much of it may be overestimate
	 */
	void add(String key, long count, long error) {
		long[] sum = this.counts.computeIfAbsent(key, (k) -> new long[2]);
		sum[0] += count;
		sum[1] += error;
	}

	/**
	 * Returns the count of a key.
	 * @param key the key
	 * @return its count, 0 when not counted
	 */
	long count(String key) {
		long[] sum = this.counts.get(key);
		return (sum != null) ? sum[0] : 0;
	}

	/**
	 * Returns the heaviest keys.
	 * @param limit how many at most
	 * @return the keys with their counts, heaviest first
	 */
	List<HeavyHitters.Count> top(int limit) {
		List<HeavyHitters.Count> all = new ArrayList<>(this.counts.size());
		this.counts.forEach((key, sum) -> all.add(new HeavyHitters.Count(key, sum[0], sum[1])));
		all.sort(HEAVIEST_FIRST);
		return (all.size() > limit) ? List.copyOf(all.subList(0, limit)) : all;
	}

}

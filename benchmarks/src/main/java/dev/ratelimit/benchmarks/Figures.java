package dev.ratelimit.benchmarks;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The statistics the process benchmarks (start-up, HTTP) report their rounds
 * with, written once: medians, and shares formatted as signed percentages.
 */
final class Figures {

	private Figures() {
	}

	/**
	 * Returns the median: the middle value, or the mean of the two middle ones.
	 * @param values the values, not changed
	 * @return the median
	 */
	static double median(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		int middle = sorted.length / 2;
		return (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
	}

	/**
	 * Returns the median, see {@link #median(double[])}.
	 * @param values the values
	 * @return the median
	 */
	static double median(List<Double> values) {
		return median(values.stream().mapToDouble(Double::doubleValue).toArray());
	}

	/**
	 * Formats a share such as 0.103 as {@code +10.3%}; NaN (nothing to compare
	 * with) as an empty cell.
	 * @param share the share
	 * @return the text
	 */
	static String signedPercent(double share) {
		return Double.isNaN(share) ? "" : String.format(Locale.ROOT, "%+.1f%%", share * 100);
	}

}

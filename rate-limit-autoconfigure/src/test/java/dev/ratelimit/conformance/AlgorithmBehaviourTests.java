package dev.ratelimit.conformance;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every algorithm under the same burst pattern, and the sliding window
 * counter's error against the exact log on a synthetic workload. The tables
 * printed here are the ones in docs/algorithms.md; rerun with
 * {@code mvn -pl rate-limit-autoconfigure test -Dtest=AlgorithmBehaviourTests}.
 */
class AlgorithmBehaviourTests {

	private static final long SECOND = 1_000_000L;

	/**
	 * A limit of 10 per second in every algorithm's terms.
	 */
	static RateLimitPolicy tenPerSecond(Algorithm algorithm) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(algorithm.name().toLowerCase().replace('_', '-'))
			.algorithm(algorithm)
			.capacity(10);
		return algorithm.isRateBased() ? builder.refill("10/1s").build() : builder.window("1s").build();
	}

	/**
	 * The burst pattern, arrival times in milliseconds: 10 at 0.5 s, 10 at 0.99 s,
	 * 10 at 1.01 s, then a steady 20 per second (twice the limit) from 1.5 s to 3.5 s.
	 */
	static List<Long> burstPattern() {
		List<Long> arrivals = new ArrayList<>();
		for (long at : new long[] { 500, 990, 1010 }) {
			for (int i = 0; i < 10; i++) {
				arrivals.add(at);
			}
		}
		for (long at = 1500; at < 3500; at += 50) {
			arrivals.add(at);
		}
		return arrivals;
	}

	@Test
	void burstPatternShowsEachAlgorithmsCharacter() {
		Map<Algorithm, Run> runs = new EnumMap<>(Algorithm.class);
		StringBuilder table = new StringBuilder(
				"| algorithm | 0.5-1.0 s | 1.0-1.5 s | 1.5-2.0 s | 2.0-2.5 s | 2.5-3.0 s | 3.0-3.5 s | admitted | most in any 1 s |\n"
						+ "|---|---|---|---|---|---|---|---|---|\n");
		for (Algorithm algorithm : Algorithm.values()) {
			Run run = run(tenPerSecond(algorithm), burstPattern());
			runs.put(algorithm, run);
			table.append("| ").append(algorithm.name().toLowerCase().replace('_', '-'));
			for (long bin = 500; bin < 3500; bin += 500) {
				table.append(" | ").append(run.admittedBetween(bin, bin + 500)).append('/')
					.append(run.arrivedBetween(bin, bin + 500));
			}
			table.append(" | ").append(run.admitted.size()).append(" | ").append(run.mostInAnyWindow(SECOND))
				.append(" |\n");
		}
		System.out.println("Burst pattern (admitted/arrived per half second, limit 10 per second):\n" + table);
		// The boundary burst: 20 admitted within 20 ms across a window boundary.
		assertThat(runs.get(Algorithm.FIXED_WINDOW).mostInAnyWindow(SECOND)).isEqualTo(20);
		// Exact: never more than 10 in any second.
		assertThat(runs.get(Algorithm.SLIDING_WINDOW_LOG).mostInAnyWindow(SECOND)).isEqualTo(10);
		// Buckets: the burst of 10 plus what refills during the window.
		assertThat(runs.get(Algorithm.TOKEN_BUCKET).mostInAnyWindow(SECOND)).isLessThanOrEqualTo(20);
		assertThat(runs.get(Algorithm.LEAKY_BUCKET).admitted).isEqualTo(runs.get(Algorithm.TOKEN_BUCKET).admitted);
		// Shaping: output leaves at most one per 100 ms.
		assertThat(runs.get(Algorithm.LEAKY_BUCKET_SHAPING).minimumOutputGap()).isEqualTo(100_000L);
		// In the steady phase the buckets admit exactly the rate, 5 per half second;
		// the windows admit in lumps of 10 as their windows (or entries) turn over.
		for (Algorithm bucket : new Algorithm[] { Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET,
				Algorithm.LEAKY_BUCKET_SHAPING }) {
			for (long bin = 2000; bin < 3500; bin += 500) {
				assertThat(runs.get(bucket).admittedBetween(bin, bin + 500)).isEqualTo(5);
			}
		}
		assertThat(runs.get(Algorithm.FIXED_WINDOW).admittedBetween(2000, 3000)).isEqualTo(10);
	}

	@Test
	void slidingCounterStaysCloseToTheExactLog() {
		Random random = new Random(42);
		List<Long> arrivals = new ArrayList<>();
		long at = 0;
		// 60 s of bursty traffic averaging twice the limit: quiet gaps and bursts.
		while (at < 60_000) {
			at += (random.nextInt(10) == 0) ? random.nextInt(400) : random.nextInt(100);
			int burst = (random.nextInt(20) == 0) ? 1 + random.nextInt(15) : 1;
			for (int i = 0; i < burst; i++) {
				arrivals.add(at);
			}
		}
		Run counter = run(tenPerSecond(Algorithm.SLIDING_WINDOW_COUNTER), arrivals);
		Run log = run(tenPerSecond(Algorithm.SLIDING_WINDOW_LOG), arrivals);
		int disagreements = 0;
		for (int i = 0; i < arrivals.size(); i++) {
			if (counter.decisions.get(i).allowed() != log.decisions.get(i).allowed()) {
				disagreements++;
			}
		}
		double admittedError = (counter.admitted.size() - log.admitted.size()) * 100.0 / log.admitted.size();
		double disagreementRate = disagreements * 100.0 / arrivals.size();
		System.out.printf("Sliding counter vs log over %d requests in 60 s: admitted %d vs %d (%+.2f%%), "
				+ "decisions differ on %.2f%% of requests, most in any 1 s: %d vs %d%n", arrivals.size(),
				counter.admitted.size(), log.admitted.size(), admittedError, disagreementRate,
				counter.mostInAnyWindow(SECOND), log.mostInAnyWindow(SECOND));
		assertThat(log.mostInAnyWindow(SECOND)).isEqualTo(10);
		assertThat(Math.abs(admittedError)).isLessThan(5.0);
		assertThat(counter.mostInAnyWindow(SECOND)).isLessThanOrEqualTo(15);
	}

	private static Run run(RateLimitPolicy policy, List<Long> arrivalsMillis) {
		ManualTimeSource clock = new ManualTimeSource(ConformanceTests.START_MICROS);
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(clock, 10);
		Run run = new Run();
		long offset = 0;
		for (long arrival : arrivalsMillis) {
			clock.advanceMicros(arrival * 1000 - offset);
			offset = arrival * 1000;
			Decision decision = backend.tryConsume(policy, "k", 1);
			run.arrivals.add(offset);
			run.decisions.add(decision);
			if (decision.allowed()) {
				run.admitted.add(offset + decision.delayMicros());
			}
		}
		return run;
	}

	/**
	 * Arrivals, decisions and admitted (output) times of one run, in microseconds.
	 */
	private static final class Run {

		final List<Long> arrivals = new ArrayList<>();

		final List<Decision> decisions = new ArrayList<>();

		final List<Long> admitted = new ArrayList<>();

		int arrivedBetween(long fromMillis, long toMillis) {
			return (int) this.arrivals.stream().filter((t) -> t >= fromMillis * 1000 && t < toMillis * 1000).count();
		}

		int admittedBetween(long fromMillis, long toMillis) {
			int count = 0;
			for (int i = 0; i < this.arrivals.size(); i++) {
				long t = this.arrivals.get(i);
				if (t >= fromMillis * 1000 && t < toMillis * 1000 && this.decisions.get(i).allowed()) {
					count++;
				}
			}
			return count;
		}

		/** The most admitted (by output time) within any interval (t - window, t]. */
		int mostInAnyWindow(long windowMicros) {
			List<Long> sorted = this.admitted.stream().sorted().toList();
			int most = 0;
			int start = 0;
			for (int end = 0; end < sorted.size(); end++) {
				while (sorted.get(end) - sorted.get(start) >= windowMicros) {
					start++;
				}
				most = Math.max(most, end - start + 1);
			}
			return most;
		}

		long minimumOutputGap() {
			List<Long> sorted = this.admitted.stream().sorted().toList();
			long gap = Long.MAX_VALUE;
			for (int i = 1; i < sorted.size(); i++) {
				gap = Math.min(gap, sorted.get(i) - sorted.get(i - 1));
			}
			return gap;
		}

	}

}

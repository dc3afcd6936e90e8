package dev.ratelimit.concurrency;

import java.util.concurrent.TimeUnit;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.PolicyValidationException;

/**
 * How an adaptive cap finds its limit: one of Netflix concurrency-limits'
 * algorithms, which move the number of calls allowed in flight with the
 * latency (and the drops) of the calls that ran, as TCP's congestion control
 * moves its window. Validated on creation; a setting that only another
 * algorithm reads is refused rather than ignored.
 *
 * @param algorithm the algorithm
 * @param initialLimit the limit before any call has been measured
 * @param minLimit the lowest the limit goes
 * @param maxLimit the highest the limit goes
 * @param timeoutMicros a call that runs longer counts as a drop, in microseconds; 0 for no such bound
 * @param smoothing how far each estimate moves the limit, from 0 (not at all) to 1; {@code null} for the
 * algorithm's own (gradient2 0.2, vegas 1.0; aimd has none)
 * @param rttTolerance gradient2: how much slower than its long-term latency the service may get before the
 * limit falls, at least 1; {@code null} for 1.5
 * @param queueSize gradient2: calls the limit keeps above the estimate so that it can grow; {@code null} for 4
 * @param backoffRatio aimd: the share of the limit kept after a drop, in [0.5, 1); {@code null} for 0.9
 * @param longWindow gradient2: the calls its long-term latency averages over, at least 10; {@code null} for 600
 */
public record AdaptiveLimit(Algorithm algorithm, int initialLimit, int minLimit, int maxLimit, long timeoutMicros,
		@Nullable Double smoothing, @Nullable Double rttTolerance, @Nullable Integer queueSize,
		@Nullable Double backoffRatio, @Nullable Integer longWindow) {

	/**
	 * Creates settings with gradient2's own long window.
	 * @param algorithm the algorithm
	 * @param initialLimit the limit before any call has been measured
	 * @param minLimit the lowest the limit goes
	 * @param maxLimit the highest the limit goes
	 * @param timeoutMicros a call that runs longer counts as a drop; 0 for no such bound
	 * @param smoothing how far each estimate moves the limit; {@code null} for the algorithm's own
	 * @param rttTolerance gradient2's tolerance; {@code null} for 1.5
	 * @param queueSize gradient2's queue size; {@code null} for 4
	 * @param backoffRatio aimd's backoff ratio; {@code null} for 0.9
	 */
	public AdaptiveLimit(Algorithm algorithm, int initialLimit, int minLimit, int maxLimit, long timeoutMicros,
			@Nullable Double smoothing, @Nullable Double rttTolerance, @Nullable Integer queueSize,
			@Nullable Double backoffRatio) {
		this(algorithm, initialLimit, minLimit, maxLimit, timeoutMicros, smoothing, rttTolerance, queueSize,
				backoffRatio, null);
	}

	/**
	 * Checks the settings.
	 */
	public AdaptiveLimit {
		if (algorithm == null) {
			throw new PolicyValidationException("adaptive.algorithm", null, "must be gradient2, vegas or aimd");
		}
		if (minLimit < 1) {
			throw new PolicyValidationException("adaptive.min-limit", minLimit, "must be at least 1");
		}
		if (maxLimit < minLimit) {
			throw new PolicyValidationException("adaptive.max-limit", maxLimit,
					"must be at least min-limit (" + minLimit + ")");
		}
		if (initialLimit < minLimit || initialLimit > maxLimit) {
			throw new PolicyValidationException("adaptive.initial-limit", initialLimit,
					"must lie between min-limit (" + minLimit + ") and max-limit (" + maxLimit + ")");
		}
		if (timeoutMicros < 0) {
			throw new PolicyValidationException("adaptive.timeout", timeoutMicros + "us", "must not be negative");
		}
		if (smoothing != null) {
			if (algorithm == Algorithm.AIMD) {
				throw onlyFor("smoothing", smoothing, "gradient2 and vegas");
			}
			if (!(smoothing > 0 && smoothing <= 1)) {
				throw new PolicyValidationException("adaptive.smoothing", smoothing, "must lie in (0, 1]");
			}
		}
		if (rttTolerance != null) {
			if (algorithm != Algorithm.GRADIENT2) {
				throw onlyFor("rtt-tolerance", rttTolerance, "gradient2");
			}
			if (!(rttTolerance >= 1)) {
				throw new PolicyValidationException("adaptive.rtt-tolerance", rttTolerance, "must be at least 1");
			}
		}
		if (queueSize != null) {
			if (algorithm != Algorithm.GRADIENT2) {
				throw onlyFor("queue-size", queueSize, "gradient2");
			}
			if (queueSize < 0) {
				throw new PolicyValidationException("adaptive.queue-size", queueSize, "must not be negative");
			}
		}
		if (longWindow != null) {
			if (algorithm != Algorithm.GRADIENT2) {
				throw onlyFor("long-window", longWindow, "gradient2");
			}
			if (longWindow < 10) {
				throw new PolicyValidationException("adaptive.long-window", longWindow, "must be at least 10");
			}
		}
		if (backoffRatio != null) {
			if (algorithm != Algorithm.AIMD) {
				throw onlyFor("backoff-ratio", backoffRatio, "aimd");
			}
			if (!(backoffRatio >= 0.5 && backoffRatio < 1)) {
				throw new PolicyValidationException("adaptive.backoff-ratio", backoffRatio, "must lie in [0.5, 1)");
			}
		}
	}

	/**
	 * Returns the defaults of an algorithm: an initial limit of 20 between 1 and
	 * 200, no timeout, the algorithm's own tuning.
	 * @param algorithm the algorithm
	 * @return the settings
	 */
	public static AdaptiveLimit of(Algorithm algorithm) {
		return new AdaptiveLimit(algorithm, 20, 1, 200, 0, null, null, null, null);
	}

	private static PolicyValidationException onlyFor(String setting, Object value, String algorithms) {
		return new PolicyValidationException("adaptive." + setting, value,
				"applies to " + algorithms + " only; remove it or choose that algorithm");
	}

	/**
	 * Creates a fresh estimator with these settings.
	 * @return Netflix's limit, at the initial limit
	 */
	Limit newLimit() {
		return switch (this.algorithm) {
			case GRADIENT2 -> {
				Gradient2Limit.Builder builder = Gradient2Limit.newBuilder()
					.initialLimit(this.initialLimit)
					.minLimit(this.minLimit)
					.maxConcurrency(this.maxLimit);
				if (this.smoothing != null) {
					builder.smoothing(this.smoothing);
				}
				if (this.rttTolerance != null) {
					builder.rttTolerance(this.rttTolerance);
				}
				if (this.queueSize != null) {
					builder.queueSize(this.queueSize);
				}
				if (this.longWindow != null) {
					builder.longWindow(this.longWindow);
				}
				yield builder.build();
			}
			case VEGAS -> {
				VegasLimit.Builder builder = VegasLimit.newBuilder()
					.initialLimit(this.initialLimit)
					.maxConcurrency(this.maxLimit);
				if (this.smoothing != null) {
					builder.smoothing(this.smoothing);
				}
				// Vegas has no floor of its own: the limiter keeps min-limit (see PriorityLimiter).
				yield builder.build();
			}
			case AIMD -> {
				AIMDLimit.Builder builder = AIMDLimit.newBuilder()
					.initialLimit(this.initialLimit)
					.minLimit(this.minLimit)
					.maxLimit(this.maxLimit)
					// The limiter reports a call over the timeout as a drop itself; AIMD's own bound is off.
					.timeout(Long.MAX_VALUE / 2, TimeUnit.NANOSECONDS);
				if (this.backoffRatio != null) {
					builder.backoffRatio(this.backoffRatio);
				}
				yield builder.build();
			}
		};
	}

	/**
	 * An algorithm of Netflix concurrency-limits.
	 */
	public enum Algorithm {

		/**
		 * Compares each call's latency with a long-term average and lowers the limit
		 * as the service queues: the library's recommended default. Reacts to latency,
		 * not to drops.
		 */
		GRADIENT2,

		/**
		 * TCP Vegas: estimates the queue from the lowest latency seen and the latest,
		 * and moves the limit to keep it small; a drop lowers it.
		 */
		VEGAS,

		/**
		 * Additive increase, multiplicative decrease: grows by one while calls
		 * succeed, falls by the backoff ratio on a drop (a failure or a call over the
		 * timeout). Reacts to drops, not to latency.
		 */
		AIMD

	}

}

package dev.ratelimit.core;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A named, immutable, validated limit: algorithm, numbers, key expression,
 * failure mode (local by default) and missing-key behaviour. Built with
 * {@link #builder(String)}; every invalid value is rejected there with a
 * {@link PolicyValidationException} that names the attribute.
 */
public final class RateLimitPolicy extends AbstractLimit {

	/**
	 * The largest scaled bucket size ({@code capacity × period µs}) the backends
	 * accept. Lua numbers are doubles, exact up to 2^53; a margin keeps every
	 * intermediate result exact too.
	 */
	static final long MAX_SCALED_CAPACITY = 1L << 50;

	private final Algorithm algorithm;

	private final long capacity;

	private final @Nullable Refill refill;

	private final long windowMicros;

	private final MissingKeyAction missingKey;

	private final boolean shadow;

	private final int localInstances;

	private final long maxWaitMicros;

	private final long prefetch;

	private RateLimitPolicy(Builder builder) {
		super(builder);
		this.algorithm = builder.algorithm;
		this.capacity = builder.capacity;
		this.refill = builder.refill;
		this.windowMicros = builder.windowMicros;
		this.missingKey = builder.missingKey;
		this.shadow = builder.shadow;
		this.localInstances = builder.localInstances;
		this.maxWaitMicros = builder.maxWaitMicros;
		this.prefetch = builder.prefetch;
	}

	/**
	 * Starts a policy with the given name. Names are 1 to 64 characters of
	 * letters, digits, {@code .}, {@code _} and {@code -}, starting with a letter
	 * or digit, so that they can appear unquoted in keys and headers.
	 * @param name the policy name
	 * @return a builder
	 */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	@Override
	public LimitKind kind() {
		return LimitKind.RATE_LIMIT;
	}

	/** @return the algorithm */
	public Algorithm algorithm() {
		return this.algorithm;
	}

	/** @return the capacity: the largest burst, and the quota advertised in headers */
	public long capacity() {
		return this.capacity;
	}

	/**
	 * Returns the refill rate of the bucket algorithms: tokens added (token
	 * bucket), drained (leaky bucket) or served (shaping) per period.
	 * @return the rate, or {@code null} for the window algorithms
	 */
	public @Nullable Refill refill() {
		return this.refill;
	}

	/**
	 * Returns the refill rate of a bucket algorithm, which always has one.
	 * @return the rate
	 */
	Refill bucketRefill() {
		return Objects.requireNonNull(this.refill, "a rate-based policy has a refill");
	}

	/** @return what happens when the key cannot be resolved */
	public MissingKeyAction missingKey() {
		return this.missingKey;
	}

	/**
	 * Returns whether the policy runs in shadow mode: it decides and reports, but
	 * never rejects a call.
	 * @return whether the policy is a shadow policy
	 */
	public boolean shadow() {
		return this.shadow;
	}

	/** @return whether the policy refuses calls while the backend cannot answer; a shadow policy never refuses */
	@Override
	public boolean failsClosed() {
		return failureMode() == FailureMode.CLOSED && !this.shadow;
	}

	/** @return whether the policy goes unchecked while the backend cannot answer; a shadow policy never limits */
	@Override
	public boolean failsOpen() {
		return failureMode() == FailureMode.OPEN && !this.shadow;
	}

	/**
	 * Returns how long a caller over the limit may wait for its turn instead of
	 * being rejected (wait mode, for internal producers): its tokens are taken at
	 * once, reserving its place, and it proceeds when they would have been there.
	 * @return the bound in microseconds; 0 rejects at once
	 */
	public long maxWaitMicros() {
		return this.maxWaitMicros;
	}

	/**
	 * Returns how many tokens an instance prefetches: takes from a shared backend
	 * in one call and then spends locally without asking it again. Prefetch mode
	 * trades exactness for fewer round trips on high limits: across all instances
	 * at most {@code prefetch × instances} calls more than the limit can pass.
	 * @return the tokens taken per call to the backend; 0 (the default) asks the
	 * backend on every call
	 */
	public long prefetch() {
		return this.prefetch;
	}

	/**
	 * Returns why calls of this policy cannot be counted by their outcome (taken
	 * before the call, given back after it when the outcome does not count), for
	 * the start-up checks of {@code countWhen} and {@code count-on}.
	 * @return the reason, or {@code null} when the policy gives back exactly
	 */
	public @Nullable String outcomeCountingProblem() {
		if (this.algorithm == Algorithm.LEAKY_BUCKET_SHAPING) {
			return "the shaping leaky bucket has already told the callers queued behind a call when to go, "
					+ "so a turn given back could not be handed on; use leaky-bucket, token-bucket or a window";
		}
		if (this.maxWaitMicros > 0) {
			return "in wait mode (max-wait) later callers were already told when to go, counting on the "
					+ "tokens taken before them; remove max-wait";
		}
		if (this.prefetch > 0) {
			return "prefetched tokens are spent in this instance, so a unit given back cannot reach the shared "
					+ "state exactly; remove prefetch";
		}
		if (this.shadow) {
			return "a shadow policy is decided apart from the call and never refuses it; count it by outcome "
					+ "once it is enforced";
		}
		return null;
	}

	/**
	 * Returns the number of application instances that share this policy while
	 * the backend is unavailable and the policy falls back to a local limiter
	 * ({@link FailureMode#LOCAL}): each instance then enforces its share.
	 * @return the number of instances, at least 1
	 */
	public int localInstances() {
		return this.localInstances;
	}

	/**
	 * Returns this policy scaled to one instance's share, for the local fallback:
	 * the capacity and the rate divided by {@link #localInstances()}, the window
	 * kept.
	 * @return the per-instance policy, or this policy when it is not shared
	 */
	public RateLimitPolicy localShare() {
		if (this.localInstances == 1) {
			return this;
		}
		Builder builder = toBuilder(name()).capacity(Math.max(1, this.capacity / this.localInstances));
		if (this.refill != null) {
			builder.refill(new Refill(this.refill.tokens(), this.refill.periodMicros() * this.localInstances));
		}
		// Prefetching spends a shared backend's tokens; the local fallback has none to prefetch.
		return builder.localInstances(1).prefetch(0).build();
	}

	/**
	 * Returns the policy's window: the window of the window algorithms, or the time
	 * a bucket takes to refill (or drain) completely. This is the window advertised
	 * in the {@code RateLimit-Policy} header.
	 * @return the window in microseconds
	 */
	public long windowMicros() {
		return this.algorithm.isRateBased() ? bucketRefill().microsFor(this.capacity) : this.windowMicros;
	}

	/**
	 * Returns how long a key's state must be kept after its last use: after that
	 * long, forgetting it changes no decision.
	 * @return the idle time in microseconds
	 */
	public long idleMicros() {
		// The sliding counter still weighs the previous window during the current one.
		return (this.algorithm == Algorithm.SLIDING_WINDOW_COUNTER) ? 2 * this.windowMicros : windowMicros();
	}

	@Override
	public RateLimitPolicy withQuota(Quota quota) {
		quota.checkKind(LimitKind.RATE_LIMIT);
		if (quota.isEmpty()) {
			return this;
		}
		String kind = this.algorithm.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
		Builder builder = toBuilder(name());
		if (quota.capacity() != null) {
			builder.capacity(quota.capacity());
		}
		if (quota.refill() != null) {
			if (!this.algorithm.isRateBased()) {
				throw new PolicyValidationException("refill", quota.refill(), kind + " has a window, not a refill");
			}
			builder.refill(quota.refill());
		}
		if (quota.windowMicros() != null) {
			if (this.algorithm.isRateBased()) {
				throw new PolicyValidationException("window", Durations.format(quota.windowMicros()),
						kind + " has a refill, not a window");
			}
			builder.windowMicros(quota.windowMicros());
		}
		return builder.build();
	}

	@Override
	public RateLimitPolicy withPlan(String plan) {
		return Objects.equals(plan, plan()) ? this : toBuilder(name()).plan(plan).build();
	}

	/**
	 * Returns a builder initialised with this policy's values.
	 * @param newName the name of the copy
	 * @return a builder
	 */
	public Builder toBuilder(String newName) {
		Builder builder = new Builder(newName).algorithm(this.algorithm).capacity(this.capacity);
		if (this.refill != null) {
			builder.refill(this.refill);
		}
		else {
			builder.windowMicros(this.windowMicros);
		}
		return copyTo(builder).missingKey(this.missingKey)
			.shadow(this.shadow)
			.localInstances(this.localInstances)
			.maxWaitMicros(this.maxWaitMicros)
			.prefetch(this.prefetch);
	}

	@Override
	public boolean equals(Object other) {
		return this == other || (other instanceof RateLimitPolicy that && name().equals(that.name())
				&& this.algorithm == that.algorithm && this.capacity == that.capacity
				&& Objects.equals(this.refill, that.refill) && this.windowMicros == that.windowMicros
				&& key().equals(that.key())
				&& failureMode() == that.failureMode() && this.missingKey == that.missingKey
				&& this.shadow == that.shadow && this.localInstances == that.localInstances
				&& this.maxWaitMicros == that.maxWaitMicros && this.prefetch == that.prefetch
				&& visibility() == that.visibility());
	}

	@Override
	public int hashCode() {
		return Objects.hash(name(), this.algorithm, this.capacity, this.refill, key());
	}

	@Override
	public String toString() {
		return "RateLimitPolicy[" + name() + ": " + this.algorithm + " capacity=" + this.capacity
				+ ((this.refill != null) ? " refill=" + this.refill : " window=" + this.windowMicros + "us") + " key=" + key() + " failure-mode=" + failureMode() + " missing-key="
				+ this.missingKey + (this.shadow ? " shadow" : "")
				+ ((this.localInstances > 1) ? " local-instances=" + this.localInstances : "")
				+ ((this.maxWaitMicros > 0) ? " max-wait=" + this.maxWaitMicros + "us" : "")
				+ ((this.prefetch > 0) ? " prefetch=" + this.prefetch : "") + "]";
	}

	/**
	 * Builds a {@link RateLimitPolicy}, validating every value.
	 */
	public static final class Builder extends AbstractBuilder<Builder, RateLimitPolicy> {

		private Algorithm algorithm = Algorithm.TOKEN_BUCKET;

		private long capacity;

		private @Nullable Refill refill;

		private long windowMicros;

		private MissingKeyAction missingKey = MissingKeyAction.SHARED;

		private boolean shadow;

		private int localInstances = 1;

		private long maxWaitMicros;

		private long prefetch;

		private Builder(String name) {
			// An outage of the shared store must not turn a limit into no limit: decide in this instance.
			super(name, FailureMode.LOCAL);
		}

		/**
		 * Sets the algorithm; defaults to {@link Algorithm#TOKEN_BUCKET}.
		 * @param algorithm the algorithm
		 * @return this builder
		 */
		public Builder algorithm(Algorithm algorithm) {
			this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
			return this;
		}

		/**
		 * Sets the capacity (burst size); must be positive.
		 * @param capacity the capacity
		 * @return this builder
		 */
		public Builder capacity(long capacity) {
			if (capacity <= 0) {
				throw new PolicyValidationException("capacity", capacity, "must be positive");
			}
			this.capacity = capacity;
			return this;
		}

		/**
		 * Sets the refill rate.
		 * @param refill the rate
		 * @return this builder
		 */
		public Builder refill(Refill refill) {
			this.refill = Objects.requireNonNull(refill, "refill");
			return this;
		}

		/**
		 * Sets the refill rate from its text form, for example {@code 10/1s}.
		 * @param refill the rate
		 * @return this builder
		 */
		public Builder refill(String refill) {
			return refill(Refill.parse(refill));
		}

		/**
		 * Sets the window of the window algorithms.
		 * @param micros the window in microseconds, positive
		 * @return this builder
		 */
		public Builder windowMicros(long micros) {
			if (micros <= 0 || micros > MAX_SCALED_CAPACITY) {
				throw new PolicyValidationException("window", micros + "us", "must be positive and below 2^50us");
			}
			this.windowMicros = micros;
			return this;
		}

		/**
		 * Sets the window of the window algorithms from its text form, for example
		 * {@code 1s}, {@code 500ms} or {@code PT1M}.
		 * @param window the window
		 * @return this builder
		 */
		public Builder window(String window) {
			return windowMicros(Durations.parseMicros("window", window));
		}

		/**
		 * Sets the missing-key behaviour; defaults to {@link MissingKeyAction#SHARED}.
		 * @param missingKey the behaviour
		 * @return this builder
		 */
		public Builder missingKey(MissingKeyAction missingKey) {
			this.missingKey = Objects.requireNonNull(missingKey, "missingKey");
			return this;
		}

		/**
		 * Sets whether the policy only decides and reports, never rejecting.
		 * @param shadow whether the policy is a shadow policy
		 * @return this builder
		 */
		public Builder shadow(boolean shadow) {
			this.shadow = shadow;
			return this;
		}

		/**
		 * Sets the number of instances sharing the policy during a local fallback.
		 * @param localInstances the number of instances, at least 1
		 * @return this builder
		 */
		public Builder localInstances(int localInstances) {
			if (localInstances < 1) {
				throw new PolicyValidationException("local-instances", localInstances, "must be at least 1");
			}
			this.localInstances = localInstances;
			return this;
		}

		/**
		 * Sets how long a caller over the limit waits for its turn instead of being
		 * rejected; token and leaky buckets only.
		 * @param micros the bound in microseconds, 0 to reject at once
		 * @return this builder
		 */
		public Builder maxWaitMicros(long micros) {
			if (micros < 0) {
				throw new PolicyValidationException("max-wait", micros + "us", "must not be negative");
			}
			this.maxWaitMicros = micros;
			return this;
		}

		/**
		 * Sets how many tokens an instance prefetches: takes from a shared backend in
		 * one call and spends locally; token-bucket and fixed-window only.
		 * @param prefetch tokens per call to the backend, 0 (the default) to ask the
		 * backend on every call
		 * @return this builder
		 */
		public Builder prefetch(long prefetch) {
			if (prefetch < 0) {
				throw new PolicyValidationException("prefetch", prefetch, "must not be negative");
			}
			this.prefetch = prefetch;
			return this;
		}

		/**
		 * Validates the combination of values and builds the policy.
		 * @return the policy
		 * @throws PolicyValidationException if a value is missing or out of range
		 */
		@Override
		public RateLimitPolicy build() {
			if (this.capacity <= 0) {
				throw new PolicyValidationException("capacity", this.capacity, "must be set to a positive number");
			}
			String kind = this.algorithm.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
			if (this.algorithm.isRateBased()) {
				if (this.refill == null) {
					throw new PolicyValidationException("refill", null, "must be set for " + kind + ", for example 10/1s");
				}
				if (this.windowMicros != 0) {
					throw new PolicyValidationException("window", this.windowMicros + "us",
							kind + " is configured with refill, not window");
				}
				if (this.maxWaitMicros > 0 && this.algorithm == Algorithm.LEAKY_BUCKET_SHAPING) {
					throw new PolicyValidationException("max-wait", this.maxWaitMicros + "us",
							"the shaping leaky bucket always waits; its bound is capacity / rate");
				}
				if (this.maxWaitMicros > MAX_SCALED_CAPACITY / this.refill.tokens()) {
					throw new PolicyValidationException("max-wait", this.maxWaitMicros + "us", "is too long");
				}
				if (this.capacity > MAX_SCALED_CAPACITY / this.refill.periodMicros()) {
					throw new PolicyValidationException("capacity", this.capacity,
							"capacity times the refill period (" + this.refill.periodMicros()
									+ "us per token group) must stay below 2^50; lower the capacity or refill faster");
				}
			}
			else {
				if (this.windowMicros == 0) {
					throw new PolicyValidationException("window", null, "must be set for " + kind + ", for example 1s");
				}
				if (this.refill != null) {
					throw new PolicyValidationException("refill", this.refill, kind + " is configured with window, not refill");
				}
				if (this.maxWaitMicros > 0) {
					throw new PolicyValidationException("max-wait", this.maxWaitMicros + "us",
							"wait mode needs a token-bucket or leaky-bucket policy; " + kind + " only rejects");
				}
				if (this.algorithm == Algorithm.SLIDING_WINDOW_COUNTER
						&& this.capacity > MAX_SCALED_CAPACITY / this.windowMicros) {
					throw new PolicyValidationException("capacity", this.capacity,
							"capacity times the window in microseconds must stay below 2^50 for the sliding window counter; "
									+ "use a fixed window or a token bucket for limits this large");
				}
			}
			if (this.prefetch > 0) {
				validatePrefetch(kind);
			}
			return new RateLimitPolicy(this);
		}

		private void validatePrefetch(String kind) {
			if (this.algorithm != Algorithm.TOKEN_BUCKET && this.algorithm != Algorithm.FIXED_WINDOW) {
				throw new PolicyValidationException("prefetch", this.prefetch,
						"prefetch mode needs a token-bucket or fixed-window policy; " + kind + " cannot spend tokens taken in advance");
			}
			if (this.prefetch > this.capacity) {
				throw new PolicyValidationException("prefetch", this.prefetch,
						"must not exceed the capacity (" + this.capacity + "); 1% to 10% of it is typical");
			}
			if (this.maxWaitMicros > 0) {
				throw new PolicyValidationException("prefetch", this.prefetch,
						"wait mode (max-wait) reserves each caller's place in the shared bucket; it cannot be combined with prefetching");
			}
		}

	}

}

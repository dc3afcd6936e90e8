package dev.ratelimit.concurrency;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.AbstractLimit;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.Visibility;

/**
 * A cap on calls in flight: at most {@link #permits()} calls per key at once,
 * in this instance ({@link Scope#LOCAL}) or across every instance sharing Redis
 * ({@link Scope#DISTRIBUTED}). A caller waits up to {@link #maxWaitMicros()} for
 * a permit, then is rejected. Immutable; validated in {@link Builder#build()}.
 * <p>
 * The failure mode (local by default: cap the calls in this instance) is what a
 * distributed cap does when Redis cannot answer; a local cap never asks it.
 * <p>
 * An adaptive cap ({@link #adaptive()}) has no fixed number: its limit follows
 * the service's latency, per instance, and it sheds calls by
 * {@link Priority} ({@link #shedding()}) rather than counting per key. Its key
 * expression names each call's priority. It never waits, never shares its
 * count through Redis, and never names itself to a caller: a shed call is the
 * service's condition, 503.
 */
public final class ConcurrencyPolicy extends AbstractLimit {

	private final int permits;

	private final long maxWaitMicros;

	private final Scope scope;

	private final long permitTtlMicros;

	private final Rejection rejection;

	private final @Nullable AdaptiveLimit adaptive;

	private final Shedding shedding;

	private final boolean shadow;

	private ConcurrencyPolicy(Builder builder) {
		super(builder);
		this.permits = builder.permits;
		this.maxWaitMicros = builder.maxWaitMicros;
		this.scope = builder.scope;
		this.permitTtlMicros = builder.permitTtlMicros;
		this.rejection = builder.rejection;
		this.adaptive = builder.adaptive;
		this.shedding = builder.shedding;
		this.shadow = builder.shadow;
	}

	/**
	 * Starts a policy.
	 * @param name 1 to 64 letters, digits, '.', '_' or '-'
	 * @return a builder
	 */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	@Override
	public LimitKind kind() {
		return LimitKind.CONCURRENCY;
	}

	/** @return the most calls in flight per key */
	public int permits() {
		return this.permits;
	}

	/** @return how long a caller waits for a permit before it is rejected, in microseconds; 0 never waits */
	public long maxWaitMicros() {
		return this.maxWaitMicros;
	}

	/** @return whether the cap is per instance or shared through Redis */
	public Scope scope() {
		return this.scope;
	}

	/**
	 * Returns how long a distributed permit lives without renewal: a holder that
	 * dies gives its permit back after this long; a live holder renews it.
	 * @return the permit's time to live in microseconds
	 */
	public long permitTtlMicros() {
		return this.permitTtlMicros;
	}

	/** @return how a caller that gets no permit is answered */
	public Rejection rejection() {
		return this.rejection;
	}

	/**
	 * Returns how an adaptive cap finds its limit.
	 * @return the algorithm and its settings, or {@code null} for a cap of fixed permits
	 */
	public @Nullable AdaptiveLimit adaptive() {
		return this.adaptive;
	}

	/** @return whether the cap's limit follows the service's latency */
	public boolean isAdaptive() {
		return this.adaptive != null;
	}

	/** @return whom an adaptive cap sheds first and what it tells them; the defaults for a fixed cap */
	public Shedding shedding() {
		return this.shedding;
	}

	/**
	 * Returns whether the cap runs in shadow mode: it decides and reports, but
	 * lets through the calls it would refuse. Adaptive caps only.
	 * @return whether the cap is a shadow cap
	 */
	public boolean shadow() {
		return this.shadow;
	}

	/** @return whether the cap refuses calls while Redis cannot answer; a local cap never asks Redis */
	@Override
	public boolean failsClosed() {
		return this.scope == Scope.DISTRIBUTED && failureMode() == FailureMode.CLOSED;
	}

	/** @return whether the cap lets calls run uncapped while Redis cannot answer; a local cap never asks Redis */
	@Override
	public boolean failsOpen() {
		return this.scope == Scope.DISTRIBUTED && failureMode() == FailureMode.OPEN;
	}

	/**
	 * Equal when every value is: two caps built from the same configuration are
	 * the same cap, so that a refresh that changes nothing rebuilds nothing.
	 */
	@Override
	public boolean equals(Object other) {
		return this == other || (other instanceof ConcurrencyPolicy that && name().equals(that.name())
				&& key().equals(that.key()) && failureMode() == that.failureMode()
				&& visibility() == that.visibility() && this.permits == that.permits
				&& this.maxWaitMicros == that.maxWaitMicros && this.scope == that.scope
				&& this.permitTtlMicros == that.permitTtlMicros && this.rejection == that.rejection
				&& Objects.equals(this.adaptive, that.adaptive) && this.shedding.equals(that.shedding)
				&& this.shadow == that.shadow);
	}

	@Override
	public int hashCode() {
		return Objects.hash(name(), key(), this.permits, this.scope);
	}

	@Override
	public String toString() {
		if (this.adaptive != null) {
			return "ConcurrencyPolicy[" + name() + ": adaptive " + this.adaptive + ", " + this.shedding + ", priority="
					+ key() + (this.shadow ? ", shadow" : "") + "]";
		}
		return "ConcurrencyPolicy[" + name() + ": " + this.permits + " permits, " + this.scope + ", max-wait="
				+ this.maxWaitMicros + "us, permit-ttl=" + this.permitTtlMicros + "us, key=" + key() + ", reject with "
				+ this.rejection + "]";
	}

	/**
	 * Where the permits are counted.
	 */
	public enum Scope {

		/** In this instance, with a semaphore bulkhead per key. */
		LOCAL,

		/** Across every instance, with a Redis semaphore of expiring permits per key. */
		DISTRIBUTED

	}

	/**
	 * How a caller that gets no permit in time is answered, when it may see the
	 * cap: a refusal by a cap the caller may not see is always the service's
	 * reduced capacity, 503.
	 */
	public enum Rejection {

		/** 429 Too Many Requests: the caller has too many calls in flight (per-caller caps). */
		TOO_MANY_REQUESTS,

		/** 503 Service Unavailable: a shared downstream is saturated (shared caps). */
		SERVICE_UNAVAILABLE

	}

	@Override
	public ConcurrencyPolicy withQuota(Quota quota) {
		quota.checkKind(LimitKind.CONCURRENCY);
		if (this.adaptive != null && !quota.isEmpty()) {
			// Refused where plans and overrides are bound; a cap whose limit it finds itself has no permits to set.
			throw new PolicyValidationException("permits", quota.permits(),
					"an adaptive cap finds its own limit; it takes no plans or overrides");
		}
		return quota.isEmpty() ? this
				: toBuilder().permits(Objects.requireNonNull(quota.permits(), "a cap's quota sets permits")).build();
	}

	@Override
	public ConcurrencyPolicy withPlan(String plan) {
		return Objects.equals(plan, plan()) ? this : toBuilder().plan(plan).build();
	}

	/**
	 * Returns a builder initialised with this cap's values, to derive a variant
	 * (another key, another max-wait).
	 * @return a builder
	 */
	public Builder toBuilder() {
		Builder builder = copyTo(new Builder(name())).permits(this.permits).scope(this.scope).rejection(this.rejection);
		builder.maxWaitMicros = this.maxWaitMicros;
		builder.permitTtlMicros = this.permitTtlMicros;
		builder.adaptive = this.adaptive;
		if (this.adaptive != null) {
			// Derived from max-limit when built again, perhaps with another adaptive setting.
			builder.permits = 0;
		}
		builder.shedding = this.shedding;
		builder.shadow = this.shadow;
		return builder;
	}

	/**
	 * Builds a {@link ConcurrencyPolicy}.
	 */
	public static final class Builder extends AbstractBuilder<Builder, ConcurrencyPolicy> {

		private int permits;

		private long maxWaitMicros;

		private Scope scope = Scope.LOCAL;

		private long permitTtlMicros = Duration.ofSeconds(30).toNanos() / 1_000L;

		private Rejection rejection = Rejection.TOO_MANY_REQUESTS;

		private @Nullable AdaptiveLimit adaptive;

		private Shedding shedding = Shedding.defaults();

		private boolean shadow;

		private Builder(String name) {
			// An outage of the permit store must not uncap the calls: cap them in this instance.
			super(name, FailureMode.LOCAL);
		}

		/**
		 * Sets the number of permits.
		 * @param permits at least 1
		 * @return this builder
		 */
		public Builder permits(int permits) {
			if (permits < 1) {
				throw new PolicyValidationException("permits", permits, "must be at least 1");
			}
			this.permits = permits;
			return this;
		}

		/**
		 * Sets how long a caller waits for a permit; zero rejects at once.
		 * @param maxWait the bound
		 * @return this builder
		 */
		public Builder maxWait(Duration maxWait) {
			if (maxWait.isNegative()) {
				throw new PolicyValidationException("max-wait", maxWait, "must not be negative");
			}
			this.maxWaitMicros = maxWait.toNanos() / 1_000L;
			return this;
		}

		/**
		 * Sets the scope; {@link Scope#LOCAL} by default.
		 * @param scope the scope
		 * @return this builder
		 */
		public Builder scope(Scope scope) {
			this.scope = Objects.requireNonNull(scope, "scope");
			return this;
		}

		/**
		 * Sets how long a distributed permit lives without renewal; 30 seconds by
		 * default.
		 * @param permitTtl the permit's time to live, at least 10ms
		 * @return this builder
		 */
		public Builder permitTtl(Duration permitTtl) {
			if (permitTtl.toMillis() < 10) {
				throw new PolicyValidationException("permit-ttl", permitTtl, "must be at least 10ms");
			}
			this.permitTtlMicros = permitTtl.toNanos() / 1_000L;
			return this;
		}

		/**
		 * Sets how a rejected caller that may see the cap is answered; 429 by
		 * default. A caller that may not see it always gets 503.
		 * @param rejection the answer
		 * @return this builder
		 */
		public Builder rejection(Rejection rejection) {
			this.rejection = Objects.requireNonNull(rejection, "rejection");
			return this;
		}

		/**
		 * Makes the cap adaptive: its limit follows the service's latency. Its
		 * permits are then the highest the limit goes, and its key expression names
		 * each call's {@link Priority}.
		 * @param adaptive the algorithm and its settings; {@code null} for fixed permits
		 * @return this builder
		 */
		public Builder adaptive(@Nullable AdaptiveLimit adaptive) {
			this.adaptive = adaptive;
			return this;
		}

		/**
		 * Sets whom an adaptive cap sheds first and what it tells them;
		 * {@link Shedding#defaults()} by default.
		 * @param shedding the settings
		 * @return this builder
		 */
		public Builder shedding(Shedding shedding) {
			this.shedding = Objects.requireNonNull(shedding, "shedding");
			return this;
		}

		/**
		 * Sets shadow mode, for an adaptive cap: calls it would shed run, counted as
		 * shadow decisions.
		 * @param shadow whether the cap is a shadow cap
		 * @return this builder
		 */
		public Builder shadow(boolean shadow) {
			this.shadow = shadow;
			return this;
		}

		/**
		 * Builds the policy.
		 * @return the policy
		 */
		@Override
		public ConcurrencyPolicy build() {
			if (this.adaptive != null) {
				return buildAdaptive(this.adaptive);
			}
			if (this.shadow) {
				throw new PolicyValidationException("shadow", true, "applies to adaptive caps only");
			}
			if (this.permits < 1) {
				throw new PolicyValidationException("permits", this.permits, "must be set to at least 1");
			}
			return new ConcurrencyPolicy(this);
		}

		/**
		 * An adaptive cap counts in this instance, sheds at once and names
		 * nothing: its refusals are the service's condition, 503.
		 */
		private ConcurrencyPolicy buildAdaptive(AdaptiveLimit adaptive) {
			if (this.scope != Scope.LOCAL) {
				throw new PolicyValidationException("scope", this.scope.name().toLowerCase(Locale.ROOT),
						"an adaptive cap follows this instance's latency; it must be local");
			}
			if (this.maxWaitMicros > 0) {
				throw new PolicyValidationException("max-wait", this.maxWaitMicros / 1000 + "ms",
						"an adaptive cap sheds at once; it cannot wait");
			}
			if (this.permits > 0 && this.permits != adaptive.maxLimit()) {
				throw new PolicyValidationException("permits", this.permits,
						"an adaptive cap finds its own limit; set adaptive.max-limit instead");
			}
			if (currentVisibility() == Visibility.PUBLIC) {
				throw new PolicyValidationException("visibility", "public",
						"an adaptive cap's refusals are the service's condition and name no limit");
			}
			this.permits = adaptive.maxLimit();
			if (DEFAULT_KEY.equals(currentKey())) {
				// No priority expression: every call is in the default class, which may use the whole limit.
				this.shedding = this.shedding.withoutShares();
			}
			this.rejection = Rejection.SERVICE_UNAVAILABLE;
			visibility(Visibility.INTERNAL);
			return new ConcurrencyPolicy(this);
		}

	}

}

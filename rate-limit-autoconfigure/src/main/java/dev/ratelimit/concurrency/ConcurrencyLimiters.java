package dev.ratelimit.concurrency;

import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.IntSupplier;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.LimitListener.DecisionSource;
import dev.ratelimit.core.TimeSource;

/**
 * Sends each policy to the limiter of its kind: the local bulkheads, the
 * distributed Redis semaphore, or the adaptive caps.
 */
public final class ConcurrencyLimiters implements ConcurrencyLimiter {

	private final ConcurrencyLimiter local;

	private final @Nullable ConcurrencyLimiter distributed;

	private final ConcurrencyLimiter adaptive;

	private final LimitListener listener;

	private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();

	private volatile BiConsumer<String, IntSupplier> newPolicyObserver = (name, count) -> {
	};

	/**
	 * Creates the dispatcher.
	 * @param local the limiter of local policies
	 * @param distributed the limiter of distributed policies, or {@code null} when
	 * there is no shared backend
	 */
	public ConcurrencyLimiters(ConcurrencyLimiter local, @Nullable ConcurrencyLimiter distributed) {
		this(local, distributed, LimitListener.NONE);
	}

	/**
	 * Creates the dispatcher, with adaptive caps on the system clock.
	 * @param local the limiter of local policies
	 * @param distributed the limiter of distributed policies, or {@code null} when
	 * there is no shared backend
	 * @param listener hears every permit granted or refused
	 */
	public ConcurrencyLimiters(ConcurrencyLimiter local, @Nullable ConcurrencyLimiter distributed,
			LimitListener listener) {
		this(local, distributed, new AdaptiveConcurrencyLimiter(TimeSource.system(),
				() -> ThreadLocalRandom.current().nextDouble(), listener), listener);
	}

	/**
	 * Creates the dispatcher.
	 * @param local the limiter of local policies
	 * @param distributed the limiter of distributed policies, or {@code null} when
	 * there is no shared backend
	 * @param adaptive the limiter of adaptive caps
	 * @param listener hears every permit granted or refused
	 */
	public ConcurrencyLimiters(ConcurrencyLimiter local, @Nullable ConcurrencyLimiter distributed,
			ConcurrencyLimiter adaptive, LimitListener listener) {
		this.local = local;
		this.distributed = distributed;
		this.adaptive = adaptive;
		this.listener = listener;
	}

	@Override
	public Permit acquire(ConcurrencyPolicy policy, @Nullable String key) {
		ConcurrencyLimiter limiter = limiterOf(policy);
		Permit permit;
		try {
			permit = limiter.acquire(policy, key);
		}
		catch (ConcurrencyLimitExceededException ex) {
			throw refused(policy, key, ex);
		}
		return granted(policy, key, permit);
	}

	@Override
	public CompletionStage<Permit> acquireAsync(ConcurrencyPolicy policy, @Nullable String key,
			DecisionThreads threads) {
		return AsyncCalls.started(() -> limiterOf(policy).acquireAsync(policy, key, threads))
			.handle((permit, failure) -> {
				if (failure == null) {
					return granted(policy, key, permit);
				}
				RuntimeException cause = AsyncCalls.cause(failure);
				throw (cause instanceof ConcurrencyLimitExceededException refusal) ? refused(policy, key, refusal) : cause;
			});
	}

	private ConcurrencyLimiter limiterOf(ConcurrencyPolicy policy) {
		if (policy.isAdaptive()) {
			return this.adaptive;
		}
		if (policy.scope() != ConcurrencyPolicy.Scope.DISTRIBUTED) {
			return this.local;
		}
		if (this.distributed == null) {
			throw new IllegalStateException("Concurrency policy '" + policy.name()
					+ "' is distributed but no distributed limiter is configured (rate-limit.backend=redis)");
		}
		return this.distributed;
	}

	private ConcurrencyLimitExceededException refused(ConcurrencyPolicy policy, @Nullable String key,
			ConcurrencyLimitExceededException ex) {
		this.listener.decided(policy, key, 1, false, -1, -1, DecisionSource.STORE);
		return ex;
	}

	/** Counts a permit granted, whichever way it was taken, and uncounts it when released. */
	private Permit granted(ConcurrencyPolicy policy, @Nullable String key, Permit permit) {
		this.listener.decided(policy, key, 1, true, -1, -1, DecisionSource.STORE);
		AtomicInteger count = this.inFlight.computeIfAbsent(policy.name(), (name) -> {
			AtomicInteger created = new AtomicInteger();
			this.newPolicyObserver.accept(name, created::get);
			return created;
		});
		count.incrementAndGet();
		return new CountedPermit(permit, count);
	}

	/**
	 * Returns the calls of a policy in flight in this instance, across keys.
	 * @param policy the policy name
	 * @return the number of permits this instance holds
	 */
	public int inFlight(String policy) {
		AtomicInteger count = this.inFlight.get(policy);
		return (count != null) ? count.get() : 0;
	}

	/**
	 * Sets what to call the first time a policy hands out a permit, with a live
	 * count of its calls in flight, for metrics.
	 * @param observer receives the policy name and its count
	 */
	public void onNewPolicy(BiConsumer<String, IntSupplier> observer) {
		this.newPolicyObserver = observer;
		this.inFlight.forEach((name, count) -> observer.accept(name, count::get));
	}

	/**
	 * Returns whether distributed policies can be served.
	 * @return whether a distributed limiter exists
	 */
	public boolean supportsDistributed() {
		return this.distributed != null;
	}

	@Override
	public boolean mayBlock(ConcurrencyPolicy policy) {
		if (policy.isAdaptive()) {
			return this.adaptive.mayBlock(policy);
		}
		return (policy.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED) || this.local.mayBlock(policy);
	}

	/** A permit counted in its policy's calls in flight until it is released, once, with its ending. */
	private static final class CountedPermit extends OncePermit {

		private final Permit permit;

		private final AtomicInteger count;

		CountedPermit(Permit permit, AtomicInteger count) {
			this.permit = permit;
			this.count = count;
		}

		@Override
		protected void released(Ending ending) {
			this.count.decrementAndGet();
			this.permit.release(ending);
		}

	}

}

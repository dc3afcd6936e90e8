package dev.ratelimit.concurrency;

import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.IntSupplier;

import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.LimitListener.DecisionSource;

/**
 * Sends each policy to the limiter of its scope: the local bulkheads, or the
 * distributed Redis semaphore.
 */
public final class ConcurrencyLimiters implements ConcurrencyLimiter {

	private final ConcurrencyLimiter local;

	private final ConcurrencyLimiter distributed;

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
	public ConcurrencyLimiters(ConcurrencyLimiter local, ConcurrencyLimiter distributed) {
		this(local, distributed, LimitListener.NONE);
	}

	/**
	 * Creates the dispatcher.
	 * @param local the limiter of local policies
	 * @param distributed the limiter of distributed policies, or {@code null} when
	 * there is no shared backend
	 * @param listener hears every permit granted or refused
	 */
	public ConcurrencyLimiters(ConcurrencyLimiter local, ConcurrencyLimiter distributed, LimitListener listener) {
		this.local = local;
		this.distributed = distributed;
		this.listener = listener;
	}

	@Override
	public Permit acquire(ConcurrencyPolicy policy, String key) {
		ConcurrencyLimiter limiter = limiterOf(policy);
		Permit permit;
		try {
			permit = limiter.acquire(policy, key);
		}
		catch (ConcurrencyLimitExceededException ex) {
			throw refused(policy, ex);
		}
		return granted(policy, permit);
	}

	@Override
	public CompletionStage<Permit> acquireAsync(ConcurrencyPolicy policy, String key, DecisionThreads threads) {
		return AsyncCalls.started(() -> limiterOf(policy).acquireAsync(policy, key, threads))
			.handle((permit, failure) -> {
				if (failure == null) {
					return granted(policy, permit);
				}
				RuntimeException cause = AsyncCalls.cause(failure);
				throw (cause instanceof ConcurrencyLimitExceededException refusal) ? refused(policy, refusal) : cause;
			});
	}

	private ConcurrencyLimiter limiterOf(ConcurrencyPolicy policy) {
		if (policy.scope() != ConcurrencyPolicy.Scope.DISTRIBUTED) {
			return this.local;
		}
		if (this.distributed == null) {
			throw new IllegalStateException("Concurrency policy '" + policy.name()
					+ "' is distributed but no distributed limiter is configured (rate-limit.backend=redis)");
		}
		return this.distributed;
	}

	private ConcurrencyLimitExceededException refused(ConcurrencyPolicy policy, ConcurrencyLimitExceededException ex) {
		this.listener.decided(policy, false, DecisionSource.STORE);
		return ex;
	}

	/** Counts a permit granted, whichever way it was taken, and uncounts it when released. */
	private Permit granted(ConcurrencyPolicy policy, Permit permit) {
		this.listener.decided(policy, true, DecisionSource.STORE);
		AtomicInteger count = this.inFlight.computeIfAbsent(policy.name(), (name) -> {
			AtomicInteger created = new AtomicInteger();
			this.newPolicyObserver.accept(name, created::get);
			return created;
		});
		count.incrementAndGet();
		AtomicBoolean released = new AtomicBoolean();
		return () -> {
			if (released.compareAndSet(false, true)) {
				count.decrementAndGet();
				permit.release();
			}
		};
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
		return (policy.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED) || this.local.mayBlock(policy);
	}

}

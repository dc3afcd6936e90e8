package dev.ratelimit.prefetch;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import dev.ratelimit.core.StoreParts;
import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Take;
import dev.ratelimit.core.TimeSource;

/**
 * Prefetch mode: for policies with a {@link RateLimitPolicy#prefetch()
 * prefetch}, takes that many tokens from the shared backend in one call and
 * spends them in this instance, so that one call in {@code prefetch} reaches
 * the backend.
 * <p>
 * The tokens are really taken from the shared state, so the backend's own
 * bound still counts them; what changes is <em>when</em> they are spent. A
 * token bucket's tokens may be spent later than they were taken, so over any
 * interval at most {@code prefetch × instances} calls more than the bucket allows
 * pass. A fixed window's tokens expire at the end of the window they were taken
 * in, measured from before the call, so a window never admits more than its
 * limit; tokens an instance does not spend are lost to the others (the price of
 * prefetching, in both algorithms).
 * <p>
 * Near the limit, when the backend last reported fewer tokens left than a
 * prefetch, calls ask for their own cost only, so that the last tokens go to
 * the callers that need them. Calls whose cost exceeds the prefetch, layered
 * calls (several policies, which must be decided together) and policies
 * without a prefetch go straight to the backend.
 * <p>
 * Asked without waiting ({@link #tryConsumeAllAsync}), the calls that go
 * straight to the backend ask it without waiting; a prefetching policy's call
 * is decided synchronously on the executor given, since concurrent callers of
 * one key share a prefetch under a lock held for its round trip.
 */
public final class PrefetchingBackend implements RateLimitBackend {

	/** Idle keys' tokens are forgotten after this long; they are lost, which never over-admits. */
	private static final Duration IDLE = Duration.ofMinutes(10);

	private final RateLimitBackend delegate;

	private final TimeSource time;

	private final Cache<String, Tokens> held;

	/**
	 * Wraps a shared backend.
	 * @param delegate the shared backend the tokens are taken from
	 * @param time the local clock measuring a fixed window's end
	 * @param maxKeys the most keys holding prefetched tokens at once; the least used are forgotten
	 */
	public PrefetchingBackend(RateLimitBackend delegate, TimeSource time, long maxKeys) {
		this.delegate = delegate;
		this.time = time;
		this.held = Caffeine.newBuilder().maximumSize(maxKeys).expireAfterAccess(IDLE).build();
	}

	@Override
	public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
		if (acquisitions.size() != 1) {
			return this.delegate.tryConsumeAll(acquisitions);
		}
		Acquisition acquisition = acquisitions.get(0);
		if (!prefetches(acquisition)) {
			return this.delegate.tryConsumeAll(acquisitions);
		}
		Tokens tokens = this.held.get(acquisition.key(), (key) -> new Tokens());
		return List.of(tokens.take(acquisition));
	}

	@Override
	public CompletionStage<List<Decision>> tryConsumeAllAsync(List<Acquisition> acquisitions, Executor blocking) {
		if (acquisitions.size() != 1 || !prefetches(acquisitions.get(0))) {
			return this.delegate.tryConsumeAllAsync(acquisitions, blocking);
		}
		return AsyncCalls.call(this.delegate.blocks(), blocking, () -> tryConsumeAll(acquisitions));
	}

	/**
	 * Whether a call is decided with prefetched tokens: a prefetching policy, a
	 * cost of at least 1 and at most the prefetch.
	 */
	private static boolean prefetches(Acquisition acquisition) {
		long prefetch = acquisition.policy().prefetch();
		return prefetch != 0 && acquisition.cost() <= prefetch && acquisition.cost() != 0;
	}

	@Override
	public CompletionStage<List<Take>> tryTakeAllAsync(List<Acquisition> acquisitions, Executor blocking) {
		return this.delegate.tryTakeAllAsync(acquisitions, blocking);
	}

	@Override
	public boolean blocks() {
		return this.delegate.blocks();
	}

	@Override
	public StoreParts parts() {
		return this.delegate.parts();
	}

	/**
	 * Straight to the shared backend: prefetching policies cannot count by
	 * outcome (refused at start-up), and the other policies of such a call are
	 * decided exactly, as a layered call's are.
	 */
	@Override
	public List<Take> tryTakeAll(List<Acquisition> acquisitions) {
		return this.delegate.tryTakeAll(acquisitions);
	}

	@Override
	public void giveBack(RateLimitPolicy policy, String key, long cost, String receipt) {
		this.delegate.giveBack(policy, key, cost, receipt);
	}

	@Override
	public void reset(RateLimitPolicy policy, String key) {
		this.held.invalidate(key);
		this.delegate.reset(policy, key);
	}

	/**
	 * Returns the tokens this instance holds for a key, taken from the shared
	 * backend and not yet spent.
	 * @param key the storage key
	 * @return the tokens held, 0 when none
	 */
	public long held(String key) {
		Tokens tokens = this.held.getIfPresent(key);
		return (tokens != null) ? tokens.held(this.time.currentTimeMicros()) : 0;
	}

	/** One key's tokens in hand and what the backend last said about it. */
	private final class Tokens {

		/** Held while prefetching, so that concurrent callers share one prefetch instead of taking one each. */
		private final ReentrantLock lock = new ReentrantLock();

		private long tokens;

		private long expiresAtMicros = Long.MAX_VALUE;

		private long resetAtMicros;

		private long remoteRemaining = Long.MAX_VALUE;

		private long limit;

		Decision take(Acquisition acquisition) {
			long cost = acquisition.cost();
			this.lock.lock();
			try {
				long now = PrefetchingBackend.this.time.currentTimeMicros();
				if (held(now) >= cost) {
					this.tokens -= cost;
					return allowed(now);
				}
				if (this.remoteRemaining >= acquisition.policy().prefetch()) {
					return prefetch(acquisition, now);
				}
			}
			finally {
				this.lock.unlock();
			}
			// Near the limit: this call's cost only, without the lock, so that callers of an
			// exhausted key do not queue behind each other's round trips.
			Decision decision = PrefetchingBackend.this.delegate.tryConsume(acquisition.policy(), acquisition.key(), cost);
			this.lock.lock();
			try {
				this.remoteRemaining = decision.remaining();
				this.limit = decision.limit();
			}
			finally {
				this.lock.unlock();
			}
			return decision;
		}

		long held(long now) {
			return (now < this.expiresAtMicros) ? this.tokens : 0;
		}

		/** Prefetches, holding the lock so that concurrent callers share the tokens instead of taking some each. */
		private Decision prefetch(Acquisition acquisition, long now) {
			RateLimitPolicy policy = acquisition.policy();
			long cost = acquisition.cost();
			long request = policy.prefetch();
			Decision decision = PrefetchingBackend.this.delegate.tryConsume(policy, acquisition.key(), request);
			if (!decision.allowed() && request > cost) {
				// The prefetch did not fit: this call may still, on its own.
				request = cost;
				decision = PrefetchingBackend.this.delegate.tryConsume(policy, acquisition.key(), request);
			}
			this.remoteRemaining = decision.remaining();
			this.limit = decision.limit();
			if (!decision.allowed()) {
				return decision;
			}
			// A remainder smaller than this call's cost is dropped: it may belong to an earlier window.
			this.tokens = request - cost;
			this.resetAtMicros = now + decision.resetAfterMicros();
			// The window's end as seen from before the call, never after the backend's own.
			this.expiresAtMicros = (policy.algorithm() == Algorithm.FIXED_WINDOW) ? this.resetAtMicros : Long.MAX_VALUE;
			return allowed(now);
		}

		private Decision allowed(long now) {
			long remaining = Math.min(this.limit, this.remoteRemaining + this.tokens);
			return new Decision(true, remaining, this.limit, Math.max(0, this.resetAtMicros - now), 0);
		}

	}

}

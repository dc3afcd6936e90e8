package dev.ratelimit.resilience;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.StoreParts;
import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Take;
import dev.ratelimit.core.TimeSource;

/**
 * Answers repeated calls of a denied key locally until its retry-after has
 * passed, so that a client hammering a limit costs Redis one call, not one per
 * request.
 * <p>
 * This is exact for every algorithm: a denial's retry-after is the earliest
 * time the same cost could succeed, other callers can only push it later, and
 * a larger cost needs at least as long. So only calls of at least the denied
 * cost are answered from the cache; a smaller one still asks the backend.
 * Layered calls (several policies) always ask the backend, which must report
 * every policy's state. An operator's reset clears the key here too.
 */
public final class DenyCachingBackend implements RateLimitBackend {

	private final RateLimitBackend delegate;

	private final TimeSource time;

	private final Cache<String, Denial> denials;

	/**
	 * Wraps a backend.
	 * @param delegate the remote backend
	 * @param time the local clock measuring retry-after
	 * @param maxKeys the most denied keys remembered
	 */
	public DenyCachingBackend(RateLimitBackend delegate, TimeSource time, long maxKeys) {
		this.delegate = delegate;
		this.time = time;
		this.denials = Caffeine.newBuilder().maximumSize(maxKeys).build();
	}

	@Override
	public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
		if (acquisitions.size() != 1) {
			return this.delegate.tryConsumeAll(acquisitions);
		}
		Acquisition acquisition = acquisitions.get(0);
		long now = this.time.currentTimeMicros();
		Denial denial = this.denials.getIfPresent(acquisition.key());
		if (denial != null && answers(denial, acquisition, now)) {
			return List.of(denial.at(now));
		}
		return remember(acquisition, denial, now, this.delegate.tryConsumeAll(acquisitions));
	}

	/** Like {@link #tryConsumeAll}: a cached denial answers at once, any other call asks without waiting. */
	@Override
	public CompletionStage<List<Decision>> tryConsumeAllAsync(List<Acquisition> acquisitions, Executor blocking) {
		if (acquisitions.size() != 1) {
			return this.delegate.tryConsumeAllAsync(acquisitions, blocking);
		}
		Acquisition acquisition = acquisitions.get(0);
		long now = this.time.currentTimeMicros();
		Denial denial = this.denials.getIfPresent(acquisition.key());
		if (denial != null && answers(denial, acquisition, now)) {
			return CompletableFuture.completedFuture(List.of(denial.at(now)));
		}
		return this.delegate.tryConsumeAllAsync(acquisitions, blocking)
			.thenApply((decisions) -> remember(acquisition, denial, now, decisions));
	}

	private static boolean answers(Denial denial, Acquisition acquisition, long now) {
		return denial != null && now < denial.untilMicros && acquisition.cost() >= denial.cost;
	}

	/** Caches the backend's denial of a key, or forgets an outdated one. */
	private List<Decision> remember(Acquisition acquisition, @Nullable Denial denial, long now,
			List<Decision> decisions) {
		Decision decision = decisions.get(0);
		if (!decision.allowed() && decision.retryAfterMicros() > 0) {
			this.denials.put(acquisition.key(), new Denial(acquisition.cost(), decision, now));
		}
		else if (denial != null) {
			this.denials.invalidate(acquisition.key());
		}
		return decisions;
	}

	/**
	 * Calls that count by outcome ask the backend every time, and never leave a
	 * denial here: a give-back can make room before a denial's retry-after, and
	 * a cached denial would then refuse a call the backend allows (a user locked
	 * out of logging in for the window after a few successful logins).
	 */
	@Override
	public List<Take> tryTakeAll(List<Acquisition> acquisitions) {
		return this.delegate.tryTakeAll(acquisitions);
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
	 * Gives back, then forgets any denial of the key. Only a call of the same
	 * policy and key that does not count by outcome can have cached one (those
	 * that do never do): if it raced with this give-back, its stale denial lasts
	 * at most its retry-after and admits nothing more than the limit.
	 */
	@Override
	public void giveBack(RateLimitPolicy policy, String key, long cost, String receipt) {
		this.delegate.giveBack(policy, key, cost, receipt);
		this.denials.invalidate(key);
	}

	@Override
	public void reset(RateLimitPolicy policy, String key) {
		this.denials.invalidate(key);
		this.delegate.reset(policy, key);
	}

	/**
	 * Returns the number of keys answered locally at the moment (an estimate).
	 * @return the number of cached denials
	 */
	public long size() {
		this.denials.cleanUp();
		return this.denials.estimatedSize();
	}

	/** A denial and the times it stays true, in the local clock. */
	private static final class Denial {

		final long cost;

		final long untilMicros;

		final long resetAtMicros;

		final Decision decision;

		Denial(long cost, Decision decision, long now) {
			this.cost = cost;
			this.decision = decision;
			this.untilMicros = now + decision.retryAfterMicros();
			this.resetAtMicros = now + decision.resetAfterMicros();
		}

		/** The same denial, its waits counted from {@code now}. */
		Decision at(long now) {
			return new Decision(false, this.decision.remaining(), this.decision.limit(),
					Math.max(0, this.resetAtMicros - now), this.untilMicros - now);
		}

	}

}

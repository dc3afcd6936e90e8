package dev.ratelimit.concurrency;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.AnnouncedOutage;
import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.FailureModes;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.PendingWrites;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.StoreHealth;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.UnconfirmedWrite;
import dev.ratelimit.core.UniqueIds;

/**
 * Caps calls in flight across every instance sharing a {@link PermitStore}
 * (Redis): a permit is a lease that expires unless renewed, so an instance that
 * dies gives its permits back after one lease, and a live call keeps its permit
 * however long it runs.
 * <p>
 * <strong>Waiting.</strong> {@link #acquire} asks the store once. When refused
 * and the policy allows a wait, it asks again after sleeping with exponential
 * backoff and full jitter (a random time up to 2 ms, then up to 4, 8, ... 50
 * ms), each sleep cut short by the time left and by the moment the earliest
 * lease expires. Waiting callers thus cost the store a few calls per second
 * each, not a busy loop, and do not retry in lockstep. There is no queue:
 * when a permit frees, whichever waiter asks first takes it. A caller still
 * refused when its wait ends gets a retry hint of the time until the earliest
 * lease ends, at most a second.
 * <p>
 * {@link #acquireAsync} takes a permit the same way for a caller that must
 * never block (a reactive event loop): each attempt asks the store without
 * waiting for its reply (see {@link PermitStore#tryAcquireAsync}), and the
 * pauses between attempts are {@link DecisionThreads#delay}s, holding no
 * thread.
 * <p>
 * <strong>Renewing.</strong> Every permit held through this limiter is
 * renewed by one shared scheduled task, every third of the shortest lease in
 * use, for as long as its call runs. A permit found lost (its lease ran out
 * while renewals could not reach the store) is logged once and no longer
 * renewed; its call runs to the end, so the cap may be exceeded meanwhile.
 * <p>
 * <strong>Failures.</strong> When the store throws, the policy's failure mode
 * applies: {@link FailureMode#OPEN} runs the call without a permit,
 * {@link FailureMode#CLOSED} throws
 * {@link RateLimitBackendUnavailableException}, and {@link FailureMode#LOCAL}
 * caps the call in this instance with the {@link LocalConcurrencyLimiter}
 * (open when there is none).
 * <p>
 * <strong>Releases that cannot land.</strong> A release that cannot reach the
 * store, and the release of a permit whose acquire got no answer in time
 * (the store froze or stalled with the call written to it, and may apply it
 * after the caller has moved on), are kept and applied once the store
 * answers again (see {@link PendingWrites}): the permit frees then, not only
 * when its lease ends. Releasing a permit that was never granted changes
 * nothing. An acquire lost with its connection (a primary killed) is not
 * undone: its permit frees when its lease ends.
 */
public final class DistributedConcurrencyLimiter implements ConcurrencyLimiter, AutoCloseable {

	/** The first backoff bound, in microseconds. */
	static final long INITIAL_BACKOFF_MICROS = 2_000;

	/** The largest backoff bound, in microseconds. */
	static final long MAX_BACKOFF_MICROS = 50_000;

	/** The longest retry hint of a rejection, in microseconds. */
	static final long MAX_RETRY_HINT_MICROS = 1_000_000;

	private static final Logger logger = System.getLogger(DistributedConcurrencyLimiter.class.getName());

	private static final Permit UNENFORCED = () -> {
	};

	private final PermitStore store;

	private final LimitKeys keys;

	private final @Nullable LocalConcurrencyLimiter localFallback;

	private final TimeSource clock;

	private final Sleeper sleeper;

	private final ScheduledExecutorService renewals;

	private final boolean ownsRenewals;

	private final Set<LeasedPermit> held = ConcurrentHashMap.newKeySet();

	private final LimitListener listener;

	private final StoreHealth health;

	/** Releases that could not reach the store, or undo an acquire that got no answer. */
	private final PendingWrites<Release> releases = new PendingWrites<>("permit-releases", "permit release(s)",
			"their permits are free", Release::apply);

	/**
	 * Guards the renewal task. A lock, not a monitor: the first acquire takes it
	 * on the caller's thread (virtual, with {@code spring.threads.virtual.enabled})
	 * and schedules under it, which takes the scheduler's queue lock and may
	 * park; a virtual thread that parks inside a monitor pins its carrier on JDK
	 * 21 to 23.
	 */
	private final ReentrantLock scheduleLock = new ReentrantLock();

	/** The renewal period in use, read without the lock on every acquire. */
	private volatile long renewalPeriodMicros = Long.MAX_VALUE;

	private @Nullable ScheduledFuture<?> renewalTask;

	private boolean closed;

	/**
	 * Creates a limiter on the system clock, waiting with real sleeps, renewing
	 * on a daemon thread of its own.
	 * @param store where the permits live
	 * @param keys builds storage keys
	 * @param localFallback caps policies with failure mode local while the store
	 * fails, or {@code null} to let them run as if open
	 */
	public DistributedConcurrencyLimiter(PermitStore store, LimitKeys keys,
			@Nullable LocalConcurrencyLimiter localFallback) {
		this(store, keys, localFallback, LimitListener.NONE);
	}

	/**
	 * Creates a limiter on the system clock, waiting with real sleeps, renewing
	 * on a daemon thread of its own.
	 * @param store where the permits live
	 * @param keys builds storage keys
	 * @param localFallback caps policies with failure mode local while the store
	 * fails, or {@code null} to let them run as if open
	 * @param listener hears fallbacks and the store's calls and health
	 */
	public DistributedConcurrencyLimiter(PermitStore store, LimitKeys keys,
			@Nullable LocalConcurrencyLimiter localFallback, LimitListener listener) {
		this(store, keys, localFallback, TimeSource.system(), Sleeper.system(), null, listener);
	}

	/**
	 * Creates a limiter on the given clock and sleeper, for tests that move time
	 * by hand instead of waiting: package-private, since production always waits
	 * in real time.
	 * @param store where the permits live
	 * @param keys builds storage keys
	 * @param localFallback caps policies with failure mode local while the store
	 * fails, or {@code null} to let them run as if open
	 * @param clock measures how long a caller has waited
	 * @param sleeper waits between attempts
	 * @param renewals runs the renewals, or {@code null} for a daemon thread of
	 * this limiter's own; one passed in is not shut down by {@link #close()}
	 */
	DistributedConcurrencyLimiter(PermitStore store, LimitKeys keys, @Nullable LocalConcurrencyLimiter localFallback,
			TimeSource clock, Sleeper sleeper, @Nullable ScheduledExecutorService renewals) {
		this(store, keys, localFallback, clock, sleeper, renewals, LimitListener.NONE);
	}

	private DistributedConcurrencyLimiter(PermitStore store, LimitKeys keys,
			@Nullable LocalConcurrencyLimiter localFallback, TimeSource clock, Sleeper sleeper,
			@Nullable ScheduledExecutorService renewals, LimitListener listener) {
		this.listener = listener;
		this.health = new StoreHealth(LimitKind.CONCURRENCY, "Permit store", listener, store.parts());
		this.store = store;
		this.keys = keys;
		this.localFallback = localFallback;
		this.clock = clock;
		this.sleeper = sleeper;
		this.ownsRenewals = renewals == null;
		this.renewals = (renewals != null) ? renewals : newRenewalExecutor();
	}

	@Override
	public Permit acquire(ConcurrencyPolicy policy, @Nullable String key) {
		Waiting waiting = new Waiting(policy, key);
		while (true) {
			PermitStore.Attempt attempt;
			long start = System.nanoTime();
			try {
				attempt = this.store.tryAcquire(policy, waiting.storageKey, waiting.id);
			}
			catch (RuntimeException ex) {
				LocalConcurrencyLimiter local = failed(policy, waiting, start, ex);
				return (local != null) ? local.acquire(policy, key) : UNENFORCED;
			}
			answered(waiting.storageKey, start);
			if (attempt.granted()) {
				return hold(policy, waiting.storageKey, waiting.id);
			}
			long pause = waiting.pauseOrRefuse(attempt);
			try {
				this.sleeper.sleepMicros(pause);
			}
			catch (InterruptedException ex) {
				// No permit was taken: give up the wait and let the caller see the interrupt.
				Thread.currentThread().interrupt();
				throw new ConcurrencyLimitExceededException(policy, retryHint(attempt));
			}
		}
	}

	@Override
	public CompletionStage<Permit> acquireAsync(ConcurrencyPolicy policy, @Nullable String key,
			DecisionThreads threads) {
		return AsyncCalls.started(() -> attemptAsync(new Waiting(policy, key), threads));
	}

	/** One attempt of {@link #acquireAsync}, and after a pause on a timer the next, as {@link #acquire} loops. */
	private CompletionStage<Permit> attemptAsync(Waiting waiting, DecisionThreads threads) {
		ConcurrencyPolicy policy = waiting.policy;
		long start = System.nanoTime();
		return AsyncCalls.started(() -> this.store.tryAcquireAsync(policy, waiting.storageKey, waiting.id, threads))
			.handle((attempt, failure) -> {
				if (failure != null) {
					LocalConcurrencyLimiter local = failed(policy, waiting, start, AsyncCalls.cause(failure));
					return (local != null) ? local.acquireAsync(policy, waiting.key, threads)
							: CompletableFuture.completedFuture(UNENFORCED);
				}
				answered(waiting.storageKey, start);
				if (attempt.granted()) {
					return CompletableFuture.completedFuture(hold(policy, waiting.storageKey, waiting.id));
				}
				return threads.delay(waiting.pauseOrRefuse(attempt))
					.thenCompose((ignored) -> attemptAsync(waiting, threads));
			})
			.thenCompose((permit) -> permit);
	}

	private void answered(String storageKey, long start) {
		this.listener.storeCalled(LimitKind.CONCURRENCY, System.nanoTime() - start, true);
		this.health.answered(storageKey);
		this.releases.storeAnswered();
	}

	/**
	 * Applies the policy's failure mode to a failed attempt; an attempt the
	 * store may have granted without an answer is released once it answers.
	 * @return the limiter to take the permit from instead, or {@code null} to
	 * run the call without one
	 */
	private @Nullable LocalConcurrencyLimiter failed(ConcurrencyPolicy policy, Waiting waiting, long start,
			RuntimeException ex) {
		this.listener.storeCalled(LimitKind.CONCURRENCY, System.nanoTime() - start, false);
		this.health.failed(waiting.storageKey, ex);
		if (UnconfirmedWrite.in(ex)) {
			keep(new Release(this.store, policy, waiting.storageKey, waiting.id), ex);
		}
		return (FailureModes.apply(policy, ex, this.localFallback != null,
				this.listener) == FailureModes.Fallback.LOCAL) ? this.localFallback : null;
	}

	/**
	 * One caller's wait for a permit: its storage key, its id, its deadline and
	 * the backoff of its next pause.
	 */
	private final class Waiting {

		final ConcurrencyPolicy policy;

		final @Nullable String key;

		final String storageKey;

		/**
		 * One id for every attempt: a command the client re-sends (Lettuce replays
		 * commands queued across a reconnect) is granted the same permit, not a second.
		 */
		final String id = UniqueIds.next();

		private final boolean waits;

		private final long deadline;

		private long backoff = INITIAL_BACKOFF_MICROS;

		Waiting(ConcurrencyPolicy policy, @Nullable String key) {
			this.policy = policy;
			this.key = key;
			this.storageKey = storageKey(policy, key);
			this.waits = policy.maxWaitMicros() > 0;
			this.deadline = this.waits ? DistributedConcurrencyLimiter.this.clock.currentTimeMicros()
					+ policy.maxWaitMicros() : 0;
		}

		/**
		 * Returns how long to pause before the next attempt after a refusal:
		 * full jitter up to the backoff, cut short by the time left and by the
		 * earliest lease's end; the backoff doubles for the next.
		 * @throws ConcurrencyLimitExceededException when no time is left
		 */
		long pauseOrRefuse(PermitStore.Attempt attempt) {
			long remaining = this.waits ? this.deadline - DistributedConcurrencyLimiter.this.clock.currentTimeMicros() : 0;
			if (remaining <= 0) {
				throw new ConcurrencyLimitExceededException(this.policy, retryHint(attempt));
			}
			long jitter = ThreadLocalRandom.current().nextLong(1, this.backoff + 1);
			this.backoff = Math.min(2 * this.backoff, MAX_BACKOFF_MICROS);
			return Math.min(jitter, Math.min(remaining, Math.max(1, attempt.retryAfterMicros())));
		}

	}

	/**
	 * Returns the permits held for a key across every instance, as the store
	 * counts them.
	 * @param policy the policy
	 * @param key the caller's key, {@code null} for the policy's shared permits
	 * @return the live holders
	 */
	public int inUse(ConcurrencyPolicy policy, String key) {
		return this.store.holders(policy, storageKey(policy, key));
	}

	/**
	 * Returns how many permit releases wait for the store to answer: releases
	 * that could not reach it, and those of acquires that got no answer.
	 * @return the count
	 */
	public int pendingReleases() {
		return this.releases.size();
	}

	/**
	 * Renews the lease of every permit held through this limiter now. The
	 * scheduled task calls it every third of the shortest lease in use; tests
	 * call it by hand. A store failure leaves the permits to the next round.
	 */
	public void renewAll() {
		for (LeasedPermit permit : this.held) {
			permit.renew();
		}
	}

	/**
	 * Stops renewing: the permits still held expire after their lease unless
	 * released. Permits taken after closing are not renewed either. Shuts down
	 * the renewal thread if this limiter created it.
	 */
	@Override
	public void close() {
		this.scheduleLock.lock();
		try {
			this.closed = true;
			if (this.renewalTask != null) {
				this.renewalTask.cancel(false);
				this.renewalTask = null;
			}
		}
		finally {
			this.scheduleLock.unlock();
		}
		this.held.clear();
		if (this.ownsRenewals) {
			this.renewals.shutdownNow();
		}
		List<Release> lost = this.releases.closed();
		if (!lost.isEmpty()) {
			logger.log(Level.INFO, lost.size() + " permit release(s) could not be applied before shutdown; those "
					+ "permits free when their leases end");
		}
	}

	/** Keeps a release for when the store answers; when too many wait, the permit frees when its lease ends. */
	private void keep(Release release, RuntimeException cause) {
		if (!this.releases.keep(release, AnnouncedOutage.in(cause))) {
			logger.log(Level.DEBUG, "Permit " + release.id() + " of concurrency policy '" + release.policy().name()
					+ "' is not released (" + PendingWrites.MAX_PENDING + " releases wait already); it frees when "
					+ "its lease ends");
		}
	}

	private String storageKey(ConcurrencyPolicy policy, @Nullable String key) {
		String namespace = "concurrency:" + policy.name();
		return (key != null) ? this.keys.build(namespace, key) : this.keys.sharedKey(namespace);
	}

	/**
	 * The earliest lease end is when a permit frees at the latest only if its
	 * holder died; live holders renew and usually finish far sooner. A hint of
	 * a whole lease would keep clients away for nothing, so it is capped at a
	 * second: the shortest Retry-After there is, and what the local bulkhead's
	 * rejections send.
	 */
	private static long retryHint(PermitStore.Attempt attempt) {
		return Math.min(attempt.retryAfterMicros(), MAX_RETRY_HINT_MICROS);
	}

	private Permit hold(ConcurrencyPolicy policy, String storageKey, String id) {
		LeasedPermit permit = new LeasedPermit(policy, storageKey, id);
		this.held.add(permit);
		scheduleRenewals(Math.max(1, policy.permitTtlMicros() / 3));
		return permit;
	}

	private void scheduleRenewals(long periodMicros) {
		if (periodMicros >= this.renewalPeriodMicros) {
			return;
		}
		this.scheduleLock.lock();
		try {
			if (this.closed || periodMicros >= this.renewalPeriodMicros) {
				return;
			}
			try {
				ScheduledFuture<?> task = this.renewals.scheduleAtFixedRate(this::renewQuietly, periodMicros,
						periodMicros, TimeUnit.MICROSECONDS);
				if (this.renewalTask != null) {
					this.renewalTask.cancel(false);
				}
				this.renewalTask = task;
				this.renewalPeriodMicros = periodMicros;
			}
			catch (RejectedExecutionException ex) {
				logger.log(Level.WARNING, "Cannot schedule permit renewals; permits expire after their lease: " + ex);
			}
		}
		finally {
			this.scheduleLock.unlock();
		}
	}

	private void renewQuietly() {
		try {
			renewAll();
		}
		catch (RuntimeException ex) {
			// A periodic task that throws is never run again.
			logger.log(Level.WARNING, "Permit renewal failed: " + ex);
		}
	}

	private static ScheduledExecutorService newRenewalExecutor() {
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "rate-limit-permit-renewal");
			// Renewals must never keep a JVM alive whose application has ended.
			thread.setDaemon(true);
			return thread;
		});
		executor.setRemoveOnCancelPolicy(true);
		return executor;
	}

	/**
	 * A permit held in the store, renewed until released or lost.
	 */
	private final class LeasedPermit implements Permit {

		private final ConcurrencyPolicy policy;

		private final String key;

		private final String id;

		private final AtomicBoolean released = new AtomicBoolean();

		private final AtomicBoolean lost = new AtomicBoolean();

		LeasedPermit(ConcurrencyPolicy policy, String key, String id) {
			this.policy = policy;
			this.key = key;
			this.id = id;
		}

		@Override
		public void release() {
			// Marked before the store forgets the id, so that a renewal racing with
			// this release does not take the missing id for a lost permit.
			if (!this.released.compareAndSet(false, true)) {
				return;
			}
			DistributedConcurrencyLimiter.this.held.remove(this);
			try {
				DistributedConcurrencyLimiter.this.store.release(this.policy, this.key, this.id);
			}
			catch (RuntimeException ex) {
				// The call is over either way: released once the store answers, or by its lease if it never does.
				DistributedConcurrencyLimiter.this.health.failed(this.key, ex);
				keep(new Release(DistributedConcurrencyLimiter.this.store, this.policy, this.key, this.id), ex);
			}
		}

		void renew() {
			boolean stillHeld;
			try {
				stillHeld = DistributedConcurrencyLimiter.this.store.renew(this.policy, this.key, this.id);
				DistributedConcurrencyLimiter.this.health.answered(this.key);
			}
			catch (RuntimeException ex) {
				// The lease may outlast the outage: try again next round.
				DistributedConcurrencyLimiter.this.health.failed(this.key, ex);
				return;
			}
			if (stillHeld || this.released.get()) {
				return;
			}
			DistributedConcurrencyLimiter.this.held.remove(this);
			if (this.lost.compareAndSet(false, true)) {
				logger.log(Level.WARNING, "Permit " + this.id + " of concurrency policy '" + this.policy.name()
						+ "' on " + this.key + " expired before its call ended (permit-ttl "
						+ this.policy.permitTtlMicros() / 1000 + " ms not renewed in time); the cap may be exceeded "
						+ "until the call ends");
			}
		}

	}

	/**
	 * A permit to give back once the store answers.
	 * @param store where it is held
	 * @param policy its policy
	 * @param key its storage key
	 * @param id its holder's id
	 */
	private record Release(PermitStore store, ConcurrencyPolicy policy, String key, String id) {

		void apply() {
			this.store.release(this.policy, this.key, this.id);
		}

	}

}

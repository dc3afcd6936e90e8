package dev.ratelimit.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;

/**
 * The load of the failover tests, as a service under it: threads on every
 * application instance calling a per-user rate limit and a tenant's budget
 * (each call reserving, then settling, exactly its cost after the provider's
 * latency, so that money is in flight when Redis fails over). Counts what the
 * callers were granted, which is what the limits must account for.
 */
final class FailoverLoad implements AutoCloseable {

	/** The budget's tenant. */
	static final String TENANT = "acme";

	private final List<Thread> threads = new ArrayList<>();

	private final java.util.Set<String> users = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean running = new AtomicBoolean(true);

	/** Calls each user was allowed, over every instance. */
	private final Map<String, AtomicLong> allowed = new ConcurrentHashMap<>();

	private final AtomicLong reserved = new AtomicLong();

	private final AtomicLong settled = new AtomicLong();

	private final AtomicLong budgetRefused = new AtomicLong();

	private final AtomicLong budgetUnavailable = new AtomicLong();

	private final AtomicLong rateUnavailable = new AtomicLong();

	private final AtomicLong errors = new AtomicLong();

	private final List<Throwable> firstErrors = new java.util.concurrent.CopyOnWriteArrayList<>();

	private FailoverLoad() {
	}

	/**
	 * Starts the load.
	 * @param instances the application instances
	 * @param threadsPerInstance threads per instance and kind of call
	 * @param users the users of the rate limit, the threads taking turns
	 * @param costMicros each budget call's cost
	 * @param providerMillis how long each budget call holds its reservation
	 * @return the running load
	 */
	static FailoverLoad start(List<ConfigurableApplicationContext> instances, int threadsPerInstance, int users,
			long costMicros, long providerMillis) {
		FailoverLoad load = new FailoverLoad();
		for (int i = 0; i < instances.size(); i++) {
			ConfigurableApplicationContext instance = instances.get(i);
			RateLimiter limiter = instance.getBean(RateLimiter.class);
			CostBudgets budgets = instance.getBean(CostBudgets.class);
			LimitRegistry limits = instance.getBean(LimitRegistry.class);
			RateLimitPolicy perUser = limits.rateLimits().find("per-user").orElseThrow();
			BudgetPolicy chat = limits.budgets().find("chat").orElseThrow();
			for (int t = 0; t < threadsPerInstance; t++) {
				String user = "user-" + ((i * threadsPerInstance + t) % users);
				load.users.add(user);
				load.start("rate-" + i + "-" + t, () -> load.rateCall(limiter, perUser, user));
				load.start("budget-" + i + "-" + t,
						() -> load.budgetCall(budgets, chat, costMicros, providerMillis));
			}
		}
		return load;
	}

	private void start(String name, Runnable call) {
		Thread thread = new Thread(() -> {
			while (this.running.get()) {
				try {
					call.run();
				}
				catch (RuntimeException ex) {
					this.errors.incrementAndGet();
					if (this.firstErrors.size() < 5) {
						this.firstErrors.add(ex);
					}
					pause();
				}
			}
		}, "failover-load-" + name);
		thread.setDaemon(true);
		this.threads.add(thread);
		thread.start();
	}

	private void rateCall(RateLimiter limiter, RateLimitPolicy policy, String user) {
		try {
			RateLimitOutcome outcome = limiter.acquire(List.of(new LimitRequest(policy, user, 1)));
			if (outcome.allowed()) {
				this.allowed.computeIfAbsent(user, (u) -> new AtomicLong()).incrementAndGet();
			}
			else {
				pause();
			}
		}
		catch (RateLimitBackendUnavailableException ex) {
			this.rateUnavailable.incrementAndGet();
			pause();
		}
	}

	private void budgetCall(CostBudgets budgets, BudgetPolicy budget, long costMicros, long providerMillis) {
		Reservation reservation;
		try {
			reservation = budgets.reserve(budget, TENANT, costMicros);
		}
		catch (BudgetExceededException ex) {
			this.budgetRefused.incrementAndGet();
			pause();
			return;
		}
		catch (RateLimitBackendUnavailableException ex) {
			this.budgetUnavailable.incrementAndGet();
			pause();
			return;
		}
		this.reserved.incrementAndGet();
		// The provider's latency: the reservation is in flight meanwhile.
		LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(providerMillis));
		reservation.settle(costMicros);
		this.settled.incrementAndGet();
	}

	/** A refused caller does not retry at once: a load, not a spin on two cores. */
	private static void pause() {
		LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
	}

	/** @return calls each user was allowed */
	Map<String, Long> allowedByUser() {
		Map<String, Long> copy = new java.util.TreeMap<>();
		this.allowed.forEach((user, count) -> copy.put(user, count.get()));
		return copy;
	}

	/**
	 * Returns whether every user has been allowed at least the limit: from then
	 * on only refusals are expected.
	 * @param limit the per-user limit
	 * @return whether every user reached it
	 */
	boolean rateRefusedEverywhere(long limit) {
		for (String user : this.users) {
			AtomicLong count = this.allowed.get(user);
			if (count == null || count.get() < limit) {
				return false;
			}
		}
		return true;
	}

	/** @return budget calls that ran and settled their cost */
	long settled() {
		return this.settled.get();
	}

	/** @return budget calls admitted */
	long reserved() {
		return this.reserved.get();
	}

	/** @return budget calls refused because the budget was spent */
	long budgetRefused() {
		return this.budgetRefused.get();
	}

	/** @return budget calls refused because the store could not decide (503) */
	long budgetUnavailable() {
		return this.budgetUnavailable.get();
	}

	/** @return rate-limited calls refused because the store could not decide (503) */
	long rateUnavailable() {
		return this.rateUnavailable.get();
	}

	/** @return unexpected errors (a 500) */
	long errors() {
		return this.errors.get();
	}

	/** @return the first unexpected errors */
	List<Throwable> firstErrors() {
		return this.firstErrors;
	}

	/**
	 * Stops the threads, letting every call under way finish (settle) first.
	 */
	@Override
	public void close() {
		this.running.set(false);
		for (Thread thread : this.threads) {
			try {
				thread.join(TimeUnit.SECONDS.toMillis(30));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	@Override
	public String toString() {
		return "allowed by user " + allowedByUser() + ", budget calls reserved " + reserved() + ", settled "
				+ settled() + ", refused (spent) " + budgetRefused() + ", unavailable " + budgetUnavailable()
				+ ", rate limit unavailable " + rateUnavailable() + ", errors " + errors() + " " + firstErrors();
	}

}

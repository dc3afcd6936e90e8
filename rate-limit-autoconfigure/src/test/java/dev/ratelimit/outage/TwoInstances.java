package dev.ratelimit.outage;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.Limits;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.support.RedisServerFixture;

/**
 * Two application instances, each an application context of its own with the
 * starter's auto-configuration and nothing else, on one real Redis: what two
 * replicas of a service share. Each counts where its decisions were made.
 */
final class TwoInstances {

	private TwoInstances() {
	}

	/**
	 * Runs an action with two instances on a Redis, each with the same properties.
	 * @param redis the server
	 * @param properties the rate-limit properties of both
	 * @param action what to do with the two
	 */
	static void run(RedisServerFixture redis, List<String> properties, BiConsumer<Instance, Instance> action) {
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withBean(Counting.class)
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
					"rate-limit.backend=redis")
			.withPropertyValues(properties.toArray(String[]::new));
		runner.run((first) -> runner.run((second) -> action.accept(new Instance(first), new Instance(second))));
	}

	/**
	 * Runs tasks on as many threads at once, and returns their results.
	 * @param tasks the tasks
	 * @param <T> their result
	 * @return the results, in the tasks' order
	 * @throws Exception what a task threw
	 */
	static <T> List<T> inParallel(List<Callable<T>> tasks) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(tasks.size());
		try {
			List<Future<T>> futures = threads.invokeAll(tasks);
			List<T> results = new ArrayList<>(futures.size());
			for (Future<T> future : futures) {
				results.add(future.get());
			}
			return results;
		}
		finally {
			threads.shutdownNow();
		}
	}

	/**
	 * Waits for a thread to end.
	 * @param thread the thread
	 */
	static void join(Thread thread) {
		try {
			thread.join();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * One instance: its programmatic API and what its listener heard.
	 */
	static final class Instance {

		final Limits limits;

		final Counting counting;

		Instance(ConfigurableApplicationContext context) {
			this.limits = context.getBean(Limits.class);
			this.counting = context.getBean(Counting.class);
		}

		/**
		 * Takes one unit of a policy for a key.
		 * @param policy the policy
		 * @param key the key
		 * @return whether it was allowed
		 */
		boolean allowed(String policy, String key) {
			return this.limits.tryAcquire(policy, key, 1).allowed();
		}

	}

	/**
	 * Counts decisions by where they were made, and calls that fell to the
	 * failure mode (and when the last did).
	 */
	static class Counting implements LimitListener {

		final AtomicLong onRedis = new AtomicLong();

		final AtomicLong local = new AtomicLong();

		final AtomicLong localAllowed = new AtomicLong();

		final AtomicLong fellBack = new AtomicLong();

		/** {@link System#nanoTime()} when a call last fell to the failure mode. */
		final AtomicLong lastFellBackNanos = new AtomicLong();

		@Override
		public void decided(Limit limit, boolean allowed, DecisionSource source) {
			if (source == DecisionSource.STORE) {
				this.onRedis.incrementAndGet();
			}
			else if (source == DecisionSource.LOCAL_FALLBACK) {
				this.local.incrementAndGet();
				if (allowed) {
					this.localAllowed.incrementAndGet();
				}
			}
		}

		@Override
		public void fellBack(Limit limit, FailureMode mode, RuntimeException cause) {
			this.fellBack.incrementAndGet();
			this.lastFellBackNanos.set(System.nanoTime());
		}

	}

}

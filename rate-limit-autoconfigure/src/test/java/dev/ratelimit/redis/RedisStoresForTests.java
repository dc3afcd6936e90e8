package dev.ratelimit.redis;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.concurrency.PermitStore;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.TimeSource;

/**
 * The Redis backend and stores on an explicit clock, for tests outside this
 * package that replay a timeline. The constructors taking a clock are
 * package-private so that production code cannot pick a clock that instances
 * would disagree on; tests in this package call them directly.
 */
public final class RedisStoresForTests {

	private RedisStoresForTests() {
	}

	/**
	 * Creates a backend whose scripts run at the given clock's time.
	 * @param connectionFactory the connection factory
	 * @param clock the clock whose time is passed to the scripts
	 * @return the backend
	 */
	public static RateLimitBackend backend(RedisConnectionFactory connectionFactory, TimeSource clock) {
		return new RedisRateLimitBackend(connectionFactory, clock);
	}

	/**
	 * Creates a budget store whose script runs, and whose calendar windows are
	 * placed, at the given clock's time.
	 * @param connectionFactory the connection factory
	 * @param clock the clock whose time is passed to the script
	 * @return the store
	 */
	public static BudgetStore budgetStore(RedisConnectionFactory connectionFactory, TimeSource clock) {
		return new RedisBudgetStore(connectionFactory, clock);
	}

	/**
	 * Creates a permit store whose script runs at the given clock's time.
	 * @param connectionFactory the connection factory
	 * @param clock the clock whose time is passed to the script
	 * @return the store
	 */
	public static PermitStore permitStore(RedisConnectionFactory connectionFactory, TimeSource clock) {
		return new RedisPermitStore(connectionFactory, clock);
	}

}

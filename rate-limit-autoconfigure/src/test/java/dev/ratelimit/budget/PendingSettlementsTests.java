package dev.ratelimit.budget;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.redis.RedisBudgetStore;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.support.CapturedLog;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A settle or release that cannot reach Redis (the server died between the
 * reservation and the end of the work) is kept and applied once Redis answers
 * again: the tenant is charged what its work cost, not handed its estimate
 * back when the reservation times out. Against a real server killed and
 * started again.
 */
class PendingSettlementsTests {

	private static final BudgetPolicy MONEY = BudgetPolicy.builder("money").limit("day", "1.00").build();

	private final RedisServerFixture redis = RedisServerFixture.start();

	/** The limiter's own connection, as production has it: a frozen server fails calls after 200 ms. */
	private final RedisLimiterConnection connection = connect(this.redis);

	private final BudgetStore store = new RedisBudgetStore(this.connection);

	private final CostBudgets budgets = new CostBudgets(this.store, null, new LimitKeys("rl", 128));

	private static RedisLimiterConnection connect(RedisServerFixture redis) {
		RedisLimiterConnection connection = new RedisLimiterConnection(
				new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port())),
				Duration.ofMillis(200), Duration.ofSeconds(1), Duration.ofSeconds(2), true);
		connection.connect();
		return connection;
	}

	@AfterEach
	void stop() {
		this.budgets.close();
		this.connection.close();
		this.redis.close();
	}

	@Test
	void settleThatCannotReachRedisIsChargedOnceItAnswers() {
		Reservation reservation = this.budgets.reserve(MONEY, "tenant", 500_000);
		this.redis.kill();
		try (CapturedLog log = CapturedLog.of(CostBudgets.class)) {
			reservation.settle(300_000);
			assertThat(this.budgets.pendingSettlements()).isEqualTo(1);
			// The lost connection is the limiter connection's one warning; keeping the settle adds none.
			assertThat(log.warnings()).isEmpty();
		}
		// An empty server, as after a restart without persistence: the reservation is gone, the spend is not.
		this.redis.restart();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.budgets.pendingSettlements() == 0);
		BudgetDecision state = this.budgets.remaining(MONEY, "tenant");
		assertThat(state.spentMicros()).containsExactly(300_000);
		assertThat(state.reservedMicros()).isZero();
	}

	@Test
	void settleKeptWhileTheReservationLivesReplacesItsEstimate() {
		Reservation reservation = this.budgets.reserve(MONEY, "tenant", 500_000);
		// The connection fails, the server keeps its state: the lease still holds the estimate.
		this.redis.pause();
		try {
			reservation.settle(200_000);
		}
		finally {
			this.redis.resume();
		}
		assertThat(this.budgets.pendingSettlements()).isEqualTo(1);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.budgets.pendingSettlements() == 0);
		BudgetDecision state = this.budgets.remaining(MONEY, "tenant");
		assertThat(state.spentMicros()).containsExactly(200_000);
		assertThat(state.reservedMicros()).isZero();
		// Applied twice (a reply lost after it landed, say), it charges once.
		this.store.settle(MONEY, reservation.key(), reservation.id(), 200_000);
		assertThat(this.budgets.remaining(MONEY, "tenant").spentMicros()).containsExactly(200_000);
	}

	@Test
	void releaseThatCannotReachRedisReturnsTheEstimateOnceItAnswers() {
		Reservation reservation = this.budgets.reserve(MONEY, "tenant", 500_000);
		this.redis.pause();
		try {
			reservation.release();
		}
		finally {
			this.redis.resume();
		}
		assertThat(this.budgets.pendingSettlements()).isEqualTo(1);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.budgets.pendingSettlements() == 0);
		BudgetDecision state = this.budgets.remaining(MONEY, "tenant");
		assertThat(state.spentMicros()).containsExactly(0);
		assertThat(state.reservedMicros()).isZero();
	}

}

package dev.ratelimit.blocking;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A frozen Redis (SIGSTOP) on the asynchronous path: each kind of limit falls
 * back exactly as on the synchronous path — local decides in memory, open
 * lets the call through unchecked, closed refuses it — with BlockHound
 * watching the thread that asks (a Reactor thread that must never block) and
 * the threads the answers come on. The synchronous path is asked on the test's
 * own thread, where waiting is allowed, with keys of its own.
 */
@SpringBootTest(classes = FrozenRedisAsyncDecisionTests.App.class, webEnvironment = WebEnvironment.NONE,
		// A budget configured, for the budgets to be there.
		properties = { "rate-limit.backend=redis", "rate-limit.budgets.configured.amount=1.00" })
class FrozenRedisAsyncDecisionTests {

	static {
		BlockHoundInstalled.ensure();
	}

	/** A server of this class's own: the test freezes it. */
	static final RedisServerFixture redis = RedisServerFixture.start();

	@Autowired
	RateLimiter limiter;

	@Autowired
	CostBudgets budgets;

	@Autowired
	ConcurrencyLimiters concurrency;

	/** Stands for an event loop: a thread of Reactor's that must never block. */
	private Scheduler loop;

	/** Where a decision that can only block would go: none may, the stores here answer asynchronously. */
	private final DecisionThreads noThreads = new RedisAsyncDecisionTests.NoThreads();

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		redis.register(registry);
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@BeforeEach
	void freeze() {
		this.loop = Schedulers.newParallel("test-loop", 1);
		RateLimitPolicy probe = RateLimitPolicy.builder("probe").capacity(1000).refill("1/1s")
			.failureMode(FailureMode.OPEN).build();
		// Decided on Redis first: the limiter has connected.
		await().atMost(Duration.ofSeconds(20))
			.until(() -> !this.limiter.acquire(List.of(new LimitRequest(probe, "k", 1))).decisions().isEmpty());
		redis.pause();
	}

	@AfterEach
	void thaw() {
		redis.resume();
		this.loop.dispose();
	}

	@Test
	void rateLimitsFallBackAsOnTheSynchronousPath() {
		RateLimitPolicy local = rate(FailureMode.LOCAL);
		for (int i = 0; i < 2; i++) {
			// Decided in memory, one unit: allowed, then denied; the synchronous path alike.
			assertThat(onLoop(() -> this.limiter.acquireAsync(call(local, "a"), this.noThreads)).allowed())
				.isEqualTo(this.limiter.acquire(call(local, "s")).allowed())
				.isEqualTo(i == 0);
		}
		RateLimitOutcome open = onLoop(() -> this.limiter.acquireAsync(call(rate(FailureMode.OPEN), "a"),
				this.noThreads));
		assertThat(open.allowed()).isTrue();
		assertThat(open.decisions()).isEmpty();
		assertThat(this.limiter.acquire(call(rate(FailureMode.OPEN), "s")).decisions()).isEmpty();
		RateLimitPolicy closed = rate(FailureMode.CLOSED);
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> onLoop(() -> this.limiter.acquireAsync(call(closed, "a"), this.noThreads)));
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> this.limiter.acquire(call(closed, "s")));
	}

	@Test
	void budgetsFallBackAsOnTheSynchronousPath() {
		BudgetPolicy local = budget(FailureMode.LOCAL);
		Reservation inMemory = onLoop(() -> this.budgets.reserveAsync(local, "a", 600_000, this.noThreads));
		assertThat(inMemory.decision().allowed()).isTrue();
		assertThat(inMemory.decision().remainingMicros()[0])
			.isEqualTo(this.budgets.reserve(local, "s", 600_000).decision().remainingMicros()[0]).isEqualTo(400_000);
		Reservation unchecked = onLoop(
				() -> this.budgets.reserveAsync(budget(FailureMode.OPEN), "a", 600_000, this.noThreads));
		// Held nowhere: the work runs unrecorded.
		assertThat(unchecked.decision()).isNull();
		assertThat(this.budgets.reserve(budget(FailureMode.OPEN), "s", 600_000).decision()).isNull();
		BudgetPolicy closed = budget(FailureMode.CLOSED);
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> onLoop(() -> this.budgets.reserveAsync(closed, "a", 600_000, this.noThreads)));
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> this.budgets.reserve(closed, "s", 600_000));
	}

	@Test
	void distributedCapsFallBackAsOnTheSynchronousPath() {
		ConcurrencyPolicy local = cap(FailureMode.LOCAL);
		// Capped in this instance: one permit per key, the second refused; the synchronous path alike.
		Permit held = onLoop(() -> this.concurrency.acquireAsync(local, "a", this.noThreads));
		Permit heldToo = this.concurrency.acquire(local, "s");
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> onLoop(() -> this.concurrency.acquireAsync(local, "a", this.noThreads)));
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> this.concurrency.acquire(local, "s"));
		held.release();
		heldToo.release();
		ConcurrencyPolicy open = cap(FailureMode.OPEN);
		for (int i = 0; i < 2; i++) {
			// Unchecked: any number of calls run.
			assertThat(onLoop(() -> this.concurrency.acquireAsync(open, "a", this.noThreads))).isNotNull();
			assertThat(this.concurrency.acquire(open, "s")).isNotNull();
		}
		ConcurrencyPolicy closed = cap(FailureMode.CLOSED);
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> onLoop(() -> this.concurrency.acquireAsync(closed, "a", this.noThreads)));
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> this.concurrency.acquire(closed, "s"));
	}

	private <T> T onLoop(Supplier<CompletionStage<T>> asynchronous) {
		return Mono.defer(() -> Mono.fromCompletionStage(asynchronous.get()))
			.subscribeOn(this.loop)
			.block(Duration.ofSeconds(10));
	}

	private static List<LimitRequest> call(RateLimitPolicy policy, String key) {
		return List.of(new LimitRequest(policy, key, 1));
	}

	private static RateLimitPolicy rate(FailureMode mode) {
		return RateLimitPolicy.builder("rate-" + mode).capacity(1).refill("1/1h").failureMode(mode).build();
	}

	private static BudgetPolicy budget(FailureMode mode) {
		return BudgetPolicy.builder("budget-" + mode).limit("day", "1.00").failureMode(mode).build();
	}

	private static ConcurrencyPolicy cap(FailureMode mode) {
		return ConcurrencyPolicy.builder("cap-" + mode)
			.permits(1)
			.scope(ConcurrencyPolicy.Scope.DISTRIBUTED)
			.failureMode(mode)
			.build();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

	}

}

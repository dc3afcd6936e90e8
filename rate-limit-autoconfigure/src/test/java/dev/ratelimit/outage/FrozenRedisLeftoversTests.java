package dev.ratelimit.outage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.Limits;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * What a frozen Redis (SIGSTOP) leaves behind once it thaws. The calls that
 * were written to it just before it froze get no answer in time and follow
 * their limit's failure mode; Redis then applies them when it thaws, with no
 * caller left to release what they took. A distributed permit taken that way
 * would hold a place of the cap until its lease ends (30 s), and a budget
 * reservation would hold its estimate until it times out: a cap or a budget
 * refusing callers for what nobody holds. Each is given back instead, as
 * soon as Redis answers again, without waiting for its lease (the
 * {@code rate.limit.pending.writes} gauge counts them meanwhile); asked on the
 * caller's thread or without waiting for the answer (a reactive caller's way),
 * decisions coalesced or one call each, alike.
 */
class FrozenRedisLeftoversTests {

	/** A server of this class's own: the test freezes it. */
	static final RedisServerFixture redis = RedisServerFixture.start();

	/** As many callers as the cap has permits: each takes one while Redis freezes. */
	static final int PERMITS = 4;

	/** Well inside the leases (the permits' 30 s, the reservations' 5 min): a leftover would outlive it. */
	static final Duration GIVEN_BACK_WITHIN = Duration.ofSeconds(10);

	private ConfigurableApplicationContext context;

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	/** Starts the application, its decisions coalesced or one call each, and checks the cap and budget work. */
	private void start(boolean coalesced) {
		redis.flushAll();
		this.context = new SpringApplicationBuilder(OutageTestApplication.class)
			.properties("spring.main.web-application-type=none", "spring.main.banner-mode=off",
					"rate-limit.redis.coalescing.enabled=" + coalesced,
					"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
					"rate-limit.backend=redis", "rate-limit.concurrency.exports.permits=" + PERMITS,
					"rate-limit.concurrency.exports.scope=distributed",
					"rate-limit.concurrency.exports.failure-mode=open",
					"rate-limit.budgets.spend.amount=1.00", "rate-limit.budgets.spend.window=day",
					"rate-limit.budgets.spend.failure-mode=open")
			.run();
		Limits limits = this.context.getBean(Limits.class);
		// Both taken and given back on Redis first: the limiter is connected and its functions loaded.
		assertWholeCapOnRedis();
		limits.reserve("spend", "acme", "0.10").settle(0);
		assertThat(reservedMicros()).isZero();
	}

	@AfterEach
	void stop() {
		redis.resume();
		if (this.context != null) {
			this.context.close();
		}
	}

	/** How a caller asks: on its own thread, waiting, or without waiting (as a reactive one). */
	enum Path {

		WAITING, NOT_WAITING

	}

	static Stream<Arguments> paths() {
		return Stream.of(Arguments.of(Path.WAITING, false), Arguments.of(Path.NOT_WAITING, false),
				Arguments.of(Path.WAITING, true), Arguments.of(Path.NOT_WAITING, true));
	}

	@ParameterizedTest(name = "{0}, coalesced: {1}")
	@MethodSource("paths")
	void permitsAndReservationsTakenAsRedisFrozeAreGivenBackWhenItThaws(Path path, boolean coalesced)
			throws InterruptedException {
		start(coalesced);
		redis.pause();
		CountDownLatch done = new CountDownLatch(PERMITS + 1);
		List<Thread> callers = new ArrayList<>();
		for (int i = 0; i < PERMITS; i++) {
			callers.add(started(() -> {
				// Unanswered: the cap fails open, the call runs without a permit and ends.
				try (Permit permit = permit(path)) {
					done.countDown();
				}
			}));
		}
		callers.add(started(() -> {
			// Unanswered: the budget fails open, the work runs unrecorded and settles nothing.
			reserve(path).release();
			done.countDown();
		}));
		assertThat(done.await(30, TimeUnit.SECONDS)).as("every caller went on without Redis").isTrue();
		for (Thread caller : callers) {
			caller.join();
		}
		// Kept in this instance while Redis cannot take them, and shown so.
		assertThat(pendingWrites("budget")).as("budget writes kept").isPositive();
		assertThat(pendingWrites("concurrency")).as("permit releases kept").isPositive();
		redis.resume();
		// Redis applies what was written to it before it froze: nothing of it may stay taken.
		// A permit Redis still counts as held refuses the last of the cap's: asked again until none is.
		await().atMost(GIVEN_BACK_WITHIN)
			.ignoreException(ConcurrencyLimitExceededException.class)
			.untilAsserted(() -> {
				assertThat(reservedMicros()).as("estimate reserved in Redis").isZero();
				assertWholeCapOnRedis();
			});
		assertThat(pendingWrites("budget")).isZero();
		assertThat(pendingWrites("concurrency")).isZero();
	}

	private Permit permit(Path path) {
		if (path == Path.WAITING) {
			return this.context.getBean(Limits.class).permit("exports", null);
		}
		ConcurrencyPolicy cap = this.context.getBean(LimitRegistry.class).concurrency().find("exports").orElseThrow();
		return this.context.getBean(ConcurrencyLimiters.class)
			.acquireAsync(cap, "global", DecisionThreads.inline())
			.toCompletableFuture()
			.join();
	}

	private Reservation reserve(Path path) {
		if (path == Path.WAITING) {
			return this.context.getBean(Limits.class).reserve("spend", "acme", "0.50");
		}
		BudgetPolicy budget = this.context.getBean(LimitRegistry.class).budgets().find("spend").orElseThrow();
		return this.context.getBean(CostBudgets.class)
			.reserveAsync(budget, "acme", 500_000, DecisionThreads.inline())
			.toCompletableFuture()
			.join();
	}

	/**
	 * Takes every permit of the cap at once, and is refused one more: the cap's
	 * places are all free, and Redis, not the failure mode, is what decides.
	 */
	private void assertWholeCapOnRedis() {
		Limits limits = this.context.getBean(Limits.class);
		List<Permit> held = new ArrayList<>();
		try {
			for (int i = 0; i < PERMITS; i++) {
				held.add(limits.permit("exports", null));
			}
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
				.as("one permit more than the cap")
				.isThrownBy(() -> limits.permit("exports", null));
		}
		finally {
			held.forEach(Permit::release);
		}
	}

	/** The estimates reserved in Redis and not yet settled or released, in micro-units. */
	private long reservedMicros() {
		return this.context.getBean(Limits.class).remaining("spend", "acme").reservedMicros();
	}

	/** The {@code rate.limit.pending.writes} gauge of a kind. */
	private double pendingWrites(String kind) {
		return this.context.getBean(MeterRegistry.class).get("rate.limit.pending.writes").tag("kind", kind).gauge()
			.value();
	}

	private static Thread started(Runnable caller) {
		Thread thread = new Thread(caller, "caller");
		thread.start();
		return thread;
	}

}

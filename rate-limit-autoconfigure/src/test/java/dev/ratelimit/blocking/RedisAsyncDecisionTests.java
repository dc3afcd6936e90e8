package dev.ratelimit.blocking;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Decisions on Redis in a WebFlux application, for each kind of limit, go
 * through Lettuce's asynchronous API: no thread of Reactor's bounded elastic
 * pool is used for them. The proof is the thread the handler runs on: the one
 * its last decision completed on, Lettuce's event loop (or the server's, or
 * the Reactor timer's after a wait, when the reply was in before the
 * decision's next step was attached), where a
 * decision taken on the bounded elastic scheduler would have left it there.
 * BlockHound watches Lettuce's event loops as it watches the server's, and the
 * synchronous path taken on such a thread fails at once.
 */
@SpringBootTest(classes = RedisAsyncDecisionTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.backend=redis",
				"rate-limit.policies.per-ip.capacity=2", "rate-limit.policies.per-ip.refill=1/1h",
				"rate-limit.policies.per-ip.key=ip", "rate-limit.routes[0].pattern=/route/**",
				"rate-limit.routes[0].policies=per-ip", "rate-limit.budgets.spend.amount=1.00",
				"rate-limit.budgets.spend.key=global", "rate-limit.concurrency.cap.permits=1",
				"rate-limit.concurrency.cap.scope=distributed", "rate-limit.concurrency.waiting.permits=1",
				"rate-limit.concurrency.waiting.scope=distributed", "rate-limit.concurrency.waiting.max-wait=10s" })
class RedisAsyncDecisionTests {

	static {
		BlockHoundInstalled.ensure();
	}

	static final RedisServerFixture redis = RedisServerFixture.shared();

	/** The thread each handler ran on, by path. */
	static final Map<String, String> threads = new ConcurrentHashMap<>();

	/** Tasks run on Reactor's bounded elastic scheduler since the test began. */
	static final AtomicInteger elasticRuns = new AtomicInteger();

	/** How many had run when each handler ran, by path: its decisions took none. */
	static final Map<String, Integer> elasticRunsBefore = new ConcurrentHashMap<>();

	/** Holds the permit of {@code /waiting/hold} until the test lets it go. */
	static final Sinks.One<String> holding = Sinks.one();

	@LocalServerPort
	int port;

	@Autowired
	RateLimiter limiter;

	@Autowired
	CostBudgets budgets;

	@Autowired
	ConcurrencyLimiters concurrency;

	@Autowired
	PermitCalls permitCalls;

	/** Stands for an event loop: a thread of Reactor's that must never block. */
	private Scheduler loop;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		redis.register(registry);
	}

	@BeforeAll
	static void countBoundedElasticRuns() {
		Schedulers.onScheduleHook("count-bounded-elastic", (task) -> () -> {
			if (Thread.currentThread().getName().startsWith("boundedElastic")) {
				elasticRuns.incrementAndGet();
			}
			task.run();
		});
	}

	@AfterAll
	static void stopCounting() {
		Schedulers.resetOnScheduleHook("count-bounded-elastic");
	}

	@BeforeEach
	void newLoop() {
		redis.flushAll();
		this.loop = Schedulers.newParallel("test-loop", 1);
		// The limiter connects in the background: until it has, every decision falls back at once.
		RateLimitPolicy probe = RateLimitPolicy.builder("probe").capacity(1000).refill("1/1s")
			.failureMode(FailureMode.OPEN).build();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> !this.limiter.acquire(List.of(new LimitRequest(probe, "k", 1))).decisions().isEmpty());
		elasticRuns.set(0);
	}

	@AfterEach
	void disposeLoop() {
		this.loop.dispose();
	}

	@Test
	void aRouteRuleOnRedisIsDecidedOnLettucesEventLoop() {
		assertThat(status("/route/hello")).isEqualTo(200);
		assertThat(threads.get("route")).satisfies(RedisAsyncDecisionTests::noPooledThread);
		assertThat(elasticRunsBefore.get("route")).isZero();
		assertThat(status("/route/hello")).isEqualTo(200);
		assertThat(status("/route/hello")).isEqualTo(429);
	}

	@Test
	void anAnnotatedRateLimitOnRedisIsDecidedOnLettucesEventLoop() {
		assertThat(status("/rate")).isEqualTo(200);
		assertThat(threads.get("rate")).satisfies(RedisAsyncDecisionTests::noPooledThread);
		assertThat(elasticRunsBefore.get("rate")).isZero();
		// Not keyed by the caller: a limit the caller is not told about, so 503.
		assertThat(status("/rate")).isEqualTo(503);
	}

	@Test
	void anAnnotatedFluxIsDecidedOnLettucesEventLoop() {
		assertThat(status("/flux")).isEqualTo(200);
		assertThat(threads.get("flux")).satisfies(RedisAsyncDecisionTests::noPooledThread);
		assertThat(elasticRunsBefore.get("flux")).isZero();
		assertThat(status("/flux")).isEqualTo(503);
	}

	@Test
	void aBudgetOnRedisIsReservedOnLettucesEventLoop() {
		assertThat(status("/budget")).isEqualTo(200);
		assertThat(threads.get("budget")).satisfies(RedisAsyncDecisionTests::noPooledThread);
		assertThat(elasticRunsBefore.get("budget")).isZero();
		// 0.60 settled of 1.00: the next estimate does not fit.
		assertThat(status("/budget")).isIn(429, 503);
	}

	@Test
	void aDistributedCapIsTakenOnLettucesEventLoop() {
		for (int i = 0; i < 2; i++) {
			// Released when each call ends (on the bounded elastic scheduler): the second takes the permit again.
			elasticRuns.set(0);
			assertThat(status("/cap")).isEqualTo(200);
			assertThat(threads.get("cap")).satisfies(RedisAsyncDecisionTests::noPooledThread);
		assertThat(elasticRunsBefore.get("cap")).isZero();
		}
	}

	/**
	 * A distributed cap in wait mode waits on a timer between its attempts, no
	 * thread held: the waiting call is granted once the holder ends, and its
	 * method runs on the thread of its last attempt's reply.
	 */
	@Test
	void aDistributedCapWaitsForAPermitWithoutHoldingAThread() {
		CompletableFuture<Integer> holder = statusLater("/waiting/hold");
		await().atMost(Duration.ofSeconds(10)).until(() -> threads.containsKey("waiting-hold"));
		int callsBefore = this.permitCalls.count.get();
		CompletableFuture<Integer> waiter = statusLater("/waiting/go");
		// Refused, then asked again after a pause: it is waiting.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.permitCalls.count.get() >= callsBefore + 2);
		assertThat(waiter).isNotDone();
		holding.tryEmitValue("held");
		assertThat(holder.join()).isEqualTo(200);
		assertThat(waiter.join()).isEqualTo(200);
		assertThat(threads.get("waiting-go")).satisfies(RedisAsyncDecisionTests::noPooledThread);
	}

	/**
	 * The synchronous decision of each kind, taken on a thread that must not
	 * block, fails under BlockHound; the asynchronous one on the same thread
	 * decides on Redis.
	 */
	@Test
	void theSynchronousPathOnANonBlockingThreadFailsAndTheAsynchronousOneDecides() {
		RateLimitPolicy policy = RateLimitPolicy.builder("direct").capacity(10).refill("1/1h").build();
		List<LimitRequest> call = List.of(new LimitRequest(policy, "k", 1));
		// Sent, then refused while waiting for the reply: Redis took a unit.
		assertBlocks(() -> this.limiter.acquire(call));
		// The next one decided by Redis: 8 left (the local fallback would say 9).
		assertThat(onLoop(() -> Mono.fromCompletionStage(this.limiter.tryAcquireAsync(call, Runnable::run)))
			.decisions()
			.get(0)
			.decision()
			.remaining()).isEqualTo(8);

		BudgetPolicy budget = BudgetPolicy.builder("direct").limit("day", "5.00").build();
		assertBlocks(() -> this.budgets.reserve(budget, "k", 1_000_000));
		assertThat(onLoop(() -> Mono.fromCompletionStage(this.budgets.reserveAsync(budget, "k", 1_000_000,
				Runnable::run)))
			.decision()
			.allowed()).isTrue();

		ConcurrencyPolicy cap = ConcurrencyPolicy.builder("direct")
			// Two: the synchronous attempt took one before it was refused its wait.
			.permits(2)
			.scope(ConcurrencyPolicy.Scope.DISTRIBUTED)
			.build();
		assertBlocks(() -> this.concurrency.acquire(cap, "k"));
		int callsBefore = this.permitCalls.count.get();
		onLoop(() -> Mono.fromCompletionStage(this.concurrency.acquireAsync(cap, "k", new NoThreads()))).release();
		assertThat(this.permitCalls.count.get()).isEqualTo(callsBefore + 1);
	}

	/**
	 * A thread that must never block, Lettuce's or the server's event loop, or
	 * the Reactor timer's after a wait: not one of a pool for blocking work.
	 */
	private static void noPooledThread(String thread) {
		assertThat(thread).doesNotStartWith("boundedElastic")
			.matches("(lettuce-|webflux-http-|reactor-http-|parallel-).*");
	}

	private void assertBlocks(Runnable synchronous) {
		assertThatExceptionOfType(RuntimeException.class)
			.isThrownBy(() -> Mono.fromRunnable(synchronous).subscribeOn(this.loop).block(Duration.ofSeconds(10)))
			.withRootCauseInstanceOf(BlockingOperationError.class);
	}

	private <T> T onLoop(Supplier<Mono<T>> asynchronous) {
		return Mono.defer(asynchronous).subscribeOn(this.loop).block(Duration.ofSeconds(10));
	}

	int status(String path) {
		return statusLater(path).join();
	}

	CompletableFuture<Integer> statusLater(String path) {
		WebClient client = WebClient.builder().baseUrl("http://localhost:" + this.port).build();
		return client.get()
			.uri(path)
			.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
			.timeout(Duration.ofSeconds(20))
			.toFuture();
	}

	/** Counts the permit store's answers: a waiting caller's attempts. */
	static final class PermitCalls implements LimitListener {

		final AtomicInteger count = new AtomicInteger();

		@Override
		public void storeCalled(LimitKind kind, long nanos, boolean succeeded) {
			if (kind == LimitKind.CONCURRENCY) {
				this.count.incrementAndGet();
			}
		}

	}

	/** Threads for a decision that must need neither: it fails the test if asked. */
	static final class NoThreads implements dev.ratelimit.core.DecisionThreads {

		@Override
		public void execute(Runnable task) {
			throw new AssertionError("a Redis decision asked for a thread that may block");
		}

		@Override
		public java.util.concurrent.CompletionStage<Void> delay(long micros) {
			throw new AssertionError("a decision without a wait asked to wait");
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfigurationWithoutSecurity
	static class App {

		@Bean
		Controller controller() {
			return new Controller();
		}

		@Bean
		PermitCalls permitCalls() {
			return new PermitCalls();
		}

	}

	@RestController
	static class Controller {

		@GetMapping("/route/hello")
		Mono<String> route() {
			return ran("route");
		}

		@RateLimited(policy = "rate", capacity = "1", refill = "1/1h")
		@GetMapping("/rate")
		Mono<String> rate() {
			return ran("rate");
		}

		@RateLimited(policy = "flux", capacity = "1", refill = "1/1h")
		@GetMapping("/flux")
		Flux<String> flux() {
			threads.put("flux", Thread.currentThread().getName());
			elasticRunsBefore.put("flux", elasticRuns.get());
			return Flux.just("a", "b");
		}

		@CostBudget(value = "spend", estimate = "0.60")
		@GetMapping("/budget")
		Mono<String> budget() {
			return ran("budget");
		}

		@Concurrency("cap")
		@GetMapping("/cap")
		Mono<String> cap() {
			return ran("cap");
		}

		@Concurrency("waiting")
		@GetMapping("/waiting/hold")
		Mono<String> hold() {
			threads.put("waiting-hold", Thread.currentThread().getName());
			return holding.asMono();
		}

		@Concurrency("waiting")
		@GetMapping("/waiting/go")
		Mono<String> go() {
			return ran("waiting-go");
		}

		/** Records the thread the method itself runs on: where its decisions completed. */
		private static Mono<String> ran(String path) {
			threads.put(path, Thread.currentThread().getName());
			elasticRunsBefore.put(path, elasticRuns.get());
			return Mono.just(path);
		}

	}

}

package dev.ratelimit.aop;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.RateLimited;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.metrics.MicrometerLimitListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A method naming a fallback gets the fallback's value instead of a refusal of
 * its own limits, for each of the three kinds: called with the same arguments
 * (and the refusal, when it takes one), never for an allowed call, never for a
 * refusal thrown inside the method's body, and with nothing held: a call
 * refused by its cap has its budget reservation released before the fallback
 * runs. Subclasses run it on each backend; every test uses callers of its own.
 */
@SpringBootTest(classes = FallbackTests.App.class,
		properties = { "rate-limit.policies.runs.capacity=1", "rate-limit.policies.runs.refill=1/1h",
				"rate-limit.policies.runs.key=#user", "rate-limit.policies.outer.capacity=100",
				"rate-limit.policies.outer.refill=100/1h", "rate-limit.policies.outer.key=#user",
				"rate-limit.policies.inner.capacity=1", "rate-limit.policies.inner.refill=1/1h",
				"rate-limit.policies.inner.key=#user", "rate-limit.budgets.spend.amount=1.00",
				"rate-limit.budgets.spend.window=day", "rate-limit.budgets.spend.key=#user",
				"rate-limit.concurrency.single.permits=1", "rate-limit.concurrency.single.key=#user" })
@AutoConfigureMockMvc
abstract class FallbackTests {

	@Autowired
	Agent agent;

	@Autowired
	MockMvc mvc;

	@Autowired
	CostBudgets budgets;

	@Autowired
	ConcurrencyLimiters concurrency;

	@Autowired
	LimitRegistry limits;

	@Autowired
	MeterRegistry meters;

	private final String user = "u-" + UUID.randomUUID();

	@Test
	void rateLimitRefusalCallsTheFallbackWithTheArgumentsAndTheRefusal() {
		assertThat(this.agent.run(this.user, 1)).isEqualTo("ran 1");
		assertThat(fallbacks()).isEmpty();
		assertThat(this.agent.run(this.user, 2)).isEqualTo("later 2 [runs]");
		assertThat(fallbacks()).containsExactly("runLater " + this.user);
	}

	@Test
	void everyFallbackCalledIsCounted() {
		double before = fallbackCount("run", "RateLimitExceededException");
		this.agent.run(this.user, 1);
		this.agent.run(this.user, 2);
		this.agent.run(this.user, 3);
		assertThat(fallbackCount("run", "RateLimitExceededException")).isEqualTo(before + 2);
	}

	@Test
	void theFallbackIsNotLimited() {
		this.agent.run(this.user, 1);
		for (int attempt = 2; attempt < 10; attempt++) {
			assertThat(this.agent.run(this.user, attempt)).isEqualTo("later " + attempt + " [runs]");
		}
	}

	@Test
	void budgetRefusalCallsTheFallbackAndReservesNothing() {
		assertThat(this.agent.spend(this.user, "0.60")).isEqualTo("spent");
		assertThat(this.agent.spend(this.user, "0.60")).isEqualTo("cheaper [spend]");
		assertThat(fallbacks()).containsExactly("cheaper " + this.user);
		assertSpentAndNothingReserved(600_000);
	}

	@Test
	void capRefusalReleasesTheBudgetReservationBeforeTheFallbackRuns() {
		try (Permit held = holdTheCap()) {
			assertThat(this.agent.capped(this.user)).isEqualTo("busy");
			// The fallback ran after the reservation was released: it saw the budget untouched.
			assertThat(fallbacks()).containsExactly("busy " + this.user + " reserved 0");
		}
		assertSpentAndNothingReserved(0);
		assertThat(this.agent.capped(this.user)).isEqualTo("capped");
		assertSpentAndNothingReserved(400_000);
	}

	@Test
	void aFallbackWithoutARefusalParameterTakesEveryRefusal() {
		try (Permit held = holdTheCap()) {
			assertThat(this.agent.capped(this.user)).isEqualTo("busy");
		}
	}

	@Test
	void aRefusalTheFallbackCannotTakeIsThrown() {
		this.agent.onlyBudgetFallback(this.user);
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.agent.onlyBudgetFallback(this.user));
		assertThat(fallbacks()).isEmpty();
	}

	@Test
	void theOverloadWithTheMostSpecificRefusalThatTakesItIsCalled() {
		// The rate limit allows the first call and the budget refuses its cost; the rate limit refuses the second.
		assertThat(this.agent.either(this.user, "-1")).isEqualTo("any refusal: InvalidCostException");
		assertThat(this.agent.either(this.user, "0.10")).isEqualTo("rate refusal");
	}

	@Test
	void aNestedRateLimitRefusalIsNotCaughtByTheOuterFallbacks() {
		for (String kind : List.of("rate", "budget", "cap")) {
			String user = this.user + "-" + kind;
			assertThat(this.agent.outer(kind, user)).isEqualTo("inner ran");
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> this.agent.outer(kind, user))
				.satisfies((ex) -> assertThat(ex.getViolatedPolicies()).containsExactly("inner"));
		}
		assertThat(fallbacks()).isEmpty();
	}

	@Test
	void anAsynchronousMethodGetsTheFallbacksFuture() {
		assertThat(this.agent.runAsync(this.user)).isCompletedWithValue("ran");
		assertThat(this.agent.runAsync(this.user)).isCompletedWithValue("queued");
	}

	@Test
	void aPrimitiveResultComesFromThePrimitiveFallback() {
		assertThat(this.agent.count(this.user)).isOne();
		assertThat(this.agent.count(this.user)).isZero();
	}

	@Test
	void aHandlerMethodAnswersWithTheFallback() throws Exception {
		this.mvc.perform(get("/run").header("X-User-Id", this.user))
			.andExpect(status().isOk())
			.andExpect(content().string("ran"));
		this.mvc.perform(get("/run").header("X-User-Id", this.user))
			.andExpect(status().isOk())
			.andExpect(content().string("queued " + this.user));
	}

	/** The fallbacks this test's callers got (the bean is shared by the tests). */
	private List<String> fallbacks() {
		return this.agent.fallbacks().stream().filter((call) -> call.contains(this.user)).toList();
	}

	private double fallbackCount(String method, String refusal) {
		Counter counter = this.meters.find(MicrometerLimitListener.METHOD_FALLBACKS)
			.tags("class", Agent.class.getName(), "method", method, "refusal", refusal)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private Permit holdTheCap() {
		return this.concurrency.acquire(this.limits.concurrency().find("single").orElseThrow(), this.user);
	}

	private void assertSpentAndNothingReserved(long spentMicros) {
		BudgetDecision state = this.agent.budget(this.user);
		assertThat(state.spentMicros()).containsExactly(spentMicros);
		assertThat(state.reservedMicros()).isZero();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Inner inner() {
			return new Inner();
		}

		@Bean
		Agent agent(Inner inner, CostBudgets budgets, LimitRegistry limits) {
			return new Agent(inner, budgets, limits);
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		Api api() {
			return new Api();
		}

	}

	static class Inner {

		@RateLimited("inner")
		public String call(String user) {
			return "inner ran";
		}

	}

	static class Agent {

		private final List<String> fallbacks = new CopyOnWriteArrayList<>();

		private final Inner inner;

		private final CostBudgets budgets;

		private final LimitRegistry limits;

		Agent(Inner inner, CostBudgets budgets, LimitRegistry limits) {
			this.inner = inner;
			this.budgets = budgets;
			this.limits = limits;
		}

		/** @return the fallbacks called, with their caller */
		public List<String> fallbacks() {
			return this.fallbacks;
		}

		@RateLimited(value = "runs", fallback = "runLater")
		public String run(String user, int attempt) {
			return "ran " + attempt;
		}

		private String runLater(String user, int attempt, RateLimitExceededException refusal) {
			this.fallbacks.add("runLater " + user);
			return "later " + attempt + " " + refusal.getViolatedPolicies();
		}

		@CostBudget(value = "spend", estimate = "#cost", fallback = "cheaper")
		public String spend(String user, String cost) {
			return "spent";
		}

		String cheaper(String user, String cost, BudgetExceededException refusal) {
			this.fallbacks.add("cheaper " + user);
			return "cheaper " + refusal.getViolatedPolicies();
		}

		@CostBudget(value = "spend", estimate = "0.40")
		@Concurrency(value = "single", fallback = "busy")
		public String capped(String user) {
			return "capped";
		}

		protected String busy(CharSequence user) {
			this.fallbacks.add("busy " + user + " reserved " + budget(user.toString()).reservedMicros());
			return "busy";
		}

		@RateLimited(value = "runs", fallback = "overBudget")
		public String onlyBudgetFallback(String user) {
			return "ran";
		}

		String overBudget(String user, BudgetExceededException refusal) {
			this.fallbacks.add("overBudget " + user);
			return "over budget";
		}

		@RateLimited(value = "runs")
		@CostBudget(value = "spend", estimate = "#cost", fallback = "either")
		public String either(String user, String cost) {
			return "ran";
		}

		String either(String user, String cost, RateLimitExceededException refusal) {
			return "rate refusal";
		}

		String either(String user, String cost, RateLimitException refusal) {
			return "any refusal: " + refusal.getClass().getSimpleName();
		}

		String either(Object user, Object cost) {
			return "never: every refusal has a more specific fallback";
		}

		public String outer(String kind, String user) {
			return switch (kind) {
				case "rate" -> outerRate(user);
				case "budget" -> outerBudget(user);
				default -> outerCap(user);
			};
		}

		@RateLimited(value = "outer", fallback = "outerFallback")
		public String outerRate(String user) {
			return this.inner.call(user);
		}

		@CostBudget(value = "spend", estimate = "0.01", fallback = "outerFallback")
		public String outerBudget(String user) {
			return this.inner.call(user);
		}

		@Concurrency(value = "single", fallback = "outerFallback")
		public String outerCap(String user) {
			return this.inner.call(user);
		}

		String outerFallback(String user) {
			this.fallbacks.add("outerFallback " + user);
			return "outer fallback";
		}

		@RateLimited(value = "runs", fallback = "runAsyncLater")
		public CompletableFuture<String> runAsync(String user) {
			return CompletableFuture.completedFuture("ran");
		}

		CompletableFuture<String> runAsyncLater(String user) {
			return CompletableFuture.completedFuture("queued");
		}

		@RateLimited(value = "runs", fallback = "none")
		public int count(String user) {
			return 1;
		}

		private int none(String user) {
			return 0;
		}

		BudgetDecision budget(String user) {
			return this.budgets.remaining(this.limits.budgets().find("spend").orElseThrow(), user);
		}

	}

	@RestController
	static class Api {

		@RateLimited(value = "runs", key = "header('X-User-Id')", fallback = "queued")
		@GetMapping("/run")
		String run(@RequestHeader("X-User-Id") String user) {
			return "ran";
		}

		String queued(String user) {
			return "queued " + user;
		}

	}

}

package dev.ratelimit.plans;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.CostBudget;
import dev.ratelimit.Limits;
import dev.ratelimit.RateLimited;
import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.core.InvalidCostException;
import dev.ratelimit.metrics.MicrometerLimitListener;

import static dev.ratelimit.support.MockRequests.peer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Plans, per-key overrides and exemptions, through the annotation and a route
 * rule, on each backend: a pro caller gets the pro quota and the headers say so,
 * an unknown or missing plan is the default plan (counted, never a 500), a
 * listed key has its own quota, a plan change keeps the key's state, and
 * exempt calls are not counted at all.
 */
@AutoConfigureMockMvc
@org.springframework.test.context.TestPropertySource(properties = {
		"rate-limit.policies.runs.key=header('X-User-Id')",
		"rate-limit.policies.runs.missing-key=reject",
		"rate-limit.policies.runs.plan=@plans.of(header('X-User-Id'))",
		"rate-limit.policies.runs.default-plan=free",
		"rate-limit.policies.runs.plans.free.capacity=2",
		"rate-limit.policies.runs.plans.free.refill=1/1h",
		"rate-limit.policies.runs.plans.pro.capacity=5",
		"rate-limit.policies.runs.plans.pro.refill=1/1h",
		"rate-limit.policies.runs.overrides.partner.capacity=7",
		"rate-limit.policies.runs.exempt.cidrs=10.0.0.0/8,2001:db8:1::/48",
		"rate-limit.policies.runs.exempt.roles=ADMIN",
		"rate-limit.policies.runs.exempt.when=header('X-Internal') == 'yes'",
		"rate-limit.policies.per-user.key=header('X-User-Id')",
		"rate-limit.policies.per-user.plan=@plans.of(header('X-User-Id'))",
		"rate-limit.policies.per-user.default-plan=free",
		"rate-limit.policies.per-user.plans.free.capacity=3",
		"rate-limit.policies.per-user.plans.free.refill=1/1h",
		"rate-limit.policies.per-user.plans.pro.capacity=6",
		"rate-limit.policies.per-user.plans.pro.refill=1/1h",
		"rate-limit.routes[0].pattern=/routed",
		"rate-limit.routes[0].policies=per-user",
		"rate-limit.budgets.spend.key=#user",
		"rate-limit.budgets.spend.window=day",
		"rate-limit.budgets.spend.plan=@plans.of(#user)",
		"rate-limit.budgets.spend.default-plan=free",
		"rate-limit.budgets.spend.plans.free.amount=1.00",
		"rate-limit.budgets.spend.plans.pro.amount=3.00" })
abstract class PlansWebTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	Plans plans;

	@Autowired
	MeterRegistry meters;

	@Autowired
	Spender spender;

	@Autowired
	Limits limits;

	@BeforeEach
	void clearPlans() {
		this.plans.changed.clear();
	}

	@Test
	void proCallerIsDecidedByTheProQuotaAndTheHeadersReportIt() throws Exception {
		String user = unique("pro-");
		for (int i = 0; i < 5; i++) {
			run(user).andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Policy", "\"runs\";q=5;w=18000"));
		}
		run(user).andExpect(status().isTooManyRequests());
	}

	@Test
	void freeCallerIsDecidedByTheFreeQuota() throws Exception {
		String user = unique("free-");
		run(user).andExpect(status().isOk()).andExpect(header().string("RateLimit-Policy", "\"runs\";q=2;w=7200"));
		run(user).andExpect(status().isOk());
		run(user).andExpect(status().isTooManyRequests());
	}

	@Test
	void unknownOrFailingPlanIsTheDefaultPlanCountedNeverA500() throws Exception {
		double unknownBefore = defaulted("unknown");
		double noneBefore = defaulted("none");
		String gold = unique("gold-");
		run(gold).andExpect(status().isOk());
		run(gold).andExpect(status().isOk());
		run(gold).andExpect(status().isTooManyRequests());
		String failing = unique("boom-");
		run(failing).andExpect(status().isOk());
		run(failing).andExpect(status().isOk());
		run(failing).andExpect(status().isTooManyRequests());
		assertThat(defaulted("unknown") - unknownBefore).isEqualTo(3);
		assertThat(defaulted("none") - noneBefore).isEqualTo(3);
	}

	@Test
	void listedKeyHasItsOwnQuotaWhateverItsPlan() throws Exception {
		for (int i = 0; i < 7; i++) {
			run("partner").andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Policy", "\"runs\";q=7;w=25200"));
		}
		run("partner").andExpect(status().isTooManyRequests());
	}

	@Test
	void planChangeKeepsTheTokensHeldCappedAtTheNewCapacity() throws Exception {
		String user = unique("pro-");
		run(user).andExpect(status().isOk());
		// Four tokens held; the free plan holds at most two.
		this.plans.changed.put(user, "free");
		run(user).andExpect(status().isOk());
		run(user).andExpect(status().isOk());
		run(user).andExpect(status().isTooManyRequests());
		// Back on pro, the key holds what it held: nothing, refilling at the pro rate.
		this.plans.changed.put(user, "pro");
		run(user).andExpect(status().isTooManyRequests());
	}

	@Test
	void exemptCallsAreNotCountedAndOthersStillAre() throws Exception {
		String user = unique("free-");
		for (int i = 0; i < 5; i++) {
			run(user, (request) -> request.with(peer("10.20.30.40"))).andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit-Policy"));
			run(user, (request) -> request.with(peer("2001:db8:1:ff::7"))).andExpect(status().isOk());
			run(user, (request) -> request.header("X-Internal", "yes")).andExpect(status().isOk());
			run(user, (request) -> request.with((r) -> {
				r.addUserRole("ADMIN");
				return r;
			})).andExpect(status().isOk());
		}
		// None of those counted: the caller still has the free plan's two.
		run(user, (request) -> request.with(peer("192.0.2.7"))).andExpect(status().isOk());
		run(user, (request) -> request.with(peer("2001:db8:2::7"))).andExpect(status().isOk());
		run(user).andExpect(status().isTooManyRequests());
	}

	@Test
	void routeRuleFollowsThePlanToo() throws Exception {
		String pro = unique("pro-");
		for (int i = 0; i < 6; i++) {
			this.mvc.perform(post("/routed").header("X-User-Id", pro)).andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Policy", "\"per-user\";q=6;w=21600"));
		}
		this.mvc.perform(post("/routed").header("X-User-Id", pro)).andExpect(status().isTooManyRequests());
		String free = unique("free-");
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(post("/routed").header("X-User-Id", free)).andExpect(status().isOk());
		}
		this.mvc.perform(post("/routed").header("X-User-Id", free)).andExpect(status().isTooManyRequests());
	}

	@Test
	void budgetFollowsThePlan() {
		String pro = unique("pro-");
		for (int i = 0; i < 3; i++) {
			this.spender.spend(pro);
		}
		assertThatExceptionOfType(BudgetExceededException.class).isThrownBy(() -> this.spender.spend(pro));
		String free = unique("free-");
		this.spender.spend(free);
		assertThatExceptionOfType(BudgetExceededException.class).isThrownBy(() -> this.spender.spend(free));
	}

	@Test
	void programmaticCallsUseTheDefaultPlanAndKeyOverrides() {
		String pro = unique("pro-");
		this.limits.acquire("runs", pro);
		this.limits.acquire("runs", pro);
		assertThat(this.limits.tryAcquire("runs", pro, 1).allowed()).isFalse();
		// The listed key's capacity is 7 (the default plan's 2): 8 could never succeed.
		assertThatExceptionOfType(InvalidCostException.class)
			.isThrownBy(() -> this.limits.tryAcquire("runs", "partner", 8))
			.withMessageContaining("capacity 7");
	}

	private double defaulted(String reason) {
		var counter = this.meters.find(MicrometerLimitListener.PLAN_DEFAULTED)
			.tags("policy", "runs", "reason", reason)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private ResultActions run(String user) throws Exception {
		return run(user, (request) -> request);
	}

	private ResultActions run(String user, java.util.function.UnaryOperator<MockHttpServletRequestBuilder> change)
			throws Exception {
		return this.mvc.perform(change.apply(post("/run").header("X-User-Id", user)));
	}

	private static String unique(String prefix) {
		return prefix + java.util.UUID.randomUUID();
	}

	/**
	 * The application's plan look-up: {@code pro-*} is pro, {@code free-*} free,
	 * {@code gold-*} a plan that is not configured, {@code boom-*} fails; a test
	 * may move a user to another plan.
	 */
	static class Plans {

		final Map<String, String> changed = new ConcurrentHashMap<>();

		public String of(String user) {
			String moved = this.changed.get(user);
			if (moved != null) {
				return moved;
			}
			if (user.startsWith("boom-")) {
				throw new IllegalStateException("plan service down");
			}
			int dash = user.indexOf('-');
			return (dash > 0) ? user.substring(0, dash) : null;
		}

	}

	@RestController
	static class Runs {

		@PostMapping("/run")
		@RateLimited("runs")
		String run() {
			return "ran";
		}

		@PostMapping("/routed")
		String routed() {
			return "routed";
		}

	}

	static class Spender {

		@CostBudget(policy = "spend", estimate = "1.00")
		public void spend(String user) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Plans plans() {
			return new Plans();
		}

		@Bean
		Runs runs() {
			return new Runs();
		}

		@Bean
		Spender spender() {
			return new Spender();
		}

		@Bean
		MeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

}

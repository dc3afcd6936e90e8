package dev.ratelimit.budget;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.CostBudget;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code @CostBudget} on controller methods: reserve, settle to the actual,
 * refuse with 429 when spent, the on-error rules, asynchronous results, and the
 * Budget-Remaining field.
 */
@SpringBootTest(classes = BudgetWebTests.App.class,
		properties = { "rate-limit.budgets.tenant.unit=USD", "rate-limit.budgets.tenant.amount=1.00",
				"rate-limit.budgets.tenant.window=day", "rate-limit.budgets.tenant.key=header('X-Tenant-Id')",
				"rate-limit.budgets.strict.amount=1.00", "rate-limit.budgets.strict.on-error=release",
				"rate-limit.budgets.strict.key=header('X-Tenant-Id')" })
@AutoConfigureMockMvc
class BudgetWebTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	ManualTimeSource clock;

	@Autowired
	CostBudgets budgets;

	@Autowired
	LimitRegistry policies;

	@BeforeEach
	void nextDay() {
		this.clock.advance(Duration.ofDays(1));
	}

	@Test
	void callIsChargedItsActualCostAndTheRemainderIsReported() throws Exception {
		this.mvc.perform(post("/chat").header("X-Tenant-Id", "t1").param("maxCost", "0.50").param("cost", "0.20"))
			.andExpect(status().isOk())
			.andExpect(header().string("Budget-Remaining",
					org.hamcrest.Matchers.startsWith("\"tenant\";w=\"day\";r=\"0.800000\";q=\"1.000000\";u=\"USD\";t=")));
		assertThat(spent("tenant", "t1")).isEqualTo(200_000);
	}

	@Test
	void estimateThatDoesNotFitIsRefusedWith429BeforeTheMethodRuns() throws Exception {
		this.mvc.perform(post("/chat").header("X-Tenant-Id", "t2").param("maxCost", "0.90").param("cost", "0.90"))
			.andExpect(status().isOk());
		this.mvc.perform(post("/chat").header("X-Tenant-Id", "t2").param("maxCost", "0.20").param("cost", "0.01"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().exists("Retry-After"))
			.andExpect(jsonPath("$['violated-policies'][0]").value("tenant"))
			.andExpect(jsonPath("$.detail").value(org.hamcrest.Matchers.containsString("Budget 'tenant'")));
		assertThat(spent("tenant", "t2")).isEqualTo(900_000);
		// another tenant has its own budget
		this.mvc.perform(post("/chat").header("X-Tenant-Id", "t3").param("maxCost", "0.20").param("cost", "0.10"))
			.andExpect(status().isOk());
	}

	@Test
	void estimateAboveTheWholeBudgetIsABadRequest() throws Exception {
		this.mvc.perform(post("/chat").header("X-Tenant-Id", "t4").param("maxCost", "2").param("cost", "1"))
			.andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.detail").value(org.hamcrest.Matchers.containsString("can never succeed")));
		this.mvc.perform(post("/chat").header("X-Tenant-Id", "t4").param("maxCost", "NaN").param("cost", "1"))
			.andExpect(status().isBadRequest());
		this.mvc.perform(post("/chat").header("X-Tenant-Id", "t4").param("maxCost", "-1").param("cost", "1"))
			.andExpect(status().isBadRequest());
	}

	@Test
	void failedCallIsChargedTheEstimateUnderKeepAndNothingUnderRelease() throws Exception {
		// MockMvc rethrows what no handler resolved: the method's own failure
		assertThatException().isThrownBy(
				() -> this.mvc.perform(post("/fail").header("X-Tenant-Id", "t5").param("maxCost", "0.30")))
			.withRootCauseInstanceOf(IllegalStateException.class);
		assertThat(spent("tenant", "t5")).isEqualTo(300_000);
		assertThat(spent("strict", "t5")).isZero();
		assertThat(this.budgets.remaining(this.policies.budgets().find("strict").orElseThrow(), "t5").reservedMicros()).isZero();
	}

	@Test
	void failedCallWhoseActualCanBeComputedFromTheExceptionIsChargedThat() throws Exception {
		assertThatException().isThrownBy(
				() -> this.mvc.perform(post("/partial").header("X-Tenant-Id", "t6").param("maxCost", "0.30")))
			.withRootCauseInstanceOf(PartialFailure.class);
		assertThat(spent("tenant", "t6")).isEqualTo(120_000);
	}

	@Test
	void asynchronousResultIsSettledWhenItCompletes() throws Exception {
		MvcResult started = this.mvc
			.perform(post("/async").header("X-Tenant-Id", "t7").param("maxCost", "0.50").param("cost", "0.05"))
			.andExpect(request().asyncStarted())
			.andReturn();
		this.mvc.perform(asyncDispatch(started)).andExpect(status().isOk());
		assertThat(spent("tenant", "t7")).isEqualTo(50_000);
		assertThat(this.budgets.remaining(this.policies.budgets().find("tenant").orElseThrow(), "t7").reservedMicros()).isZero();
	}

	private long spent(String budget, String tenant) {
		return this.budgets.remaining(this.policies.budgets().find(budget).orElseThrow(), tenant).spentMicros()[0];
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource(1_767_225_600_000_000L);
		}

		@Bean
		Chat chat() {
			return new Chat();
		}

	}

	@RestController
	static class Chat {

		@CostBudget(value = "tenant", estimate = "#maxCost", actual = "#result['cost']")
		@PostMapping("/chat")
		Map<String, Object> chat(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam String maxCost,
				@RequestParam String cost) {
			return Map.of("cost", new BigDecimal(cost));
		}

		@CostBudget(value = "tenant", estimate = "#maxCost")
		@CostBudget(value = "strict", estimate = "#maxCost")
		@PostMapping("/fail")
		Map<String, Object> fail(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam String maxCost) {
			throw new IllegalStateException("provider down");
		}

		@CostBudget(value = "tenant", estimate = "#maxCost", actual = "#exception.cost")
		@PostMapping("/partial")
		Map<String, Object> partial(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam String maxCost) {
			throw new PartialFailure(new BigDecimal("0.12"));
		}

		@CostBudget(value = "tenant", estimate = "#maxCost", actual = "#result['cost']")
		@PostMapping("/async")
		CompletableFuture<Map<String, Object>> async(@RequestHeader("X-Tenant-Id") String tenant,
				@RequestParam String maxCost, @RequestParam String cost) {
			return CompletableFuture.supplyAsync(() -> Map.of("cost", new BigDecimal(cost)));
		}

	}

	static class PartialFailure extends RuntimeException {

		private final BigDecimal cost;

		PartialFailure(BigDecimal cost) {
			super("stream broke after " + cost);
			this.cost = cost;
		}

		public BigDecimal getCost() {
			return this.cost;
		}

	}

}

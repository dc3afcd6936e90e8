package dev.ratelimit.budget;

import java.math.BigDecimal;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

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
import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.key.KeyContext;
import dev.ratelimit.web.servlet.ProblemResponses;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Our own refusals cost nothing: a budgeted call refused by a limit nested
 * inside it (the provider's shared rate, its concurrency cap, another budget)
 * before any limited work ran in it is released, not charged under the
 * budget's on-error rule; one refused after nested limited work ran (an agent
 * loop's third provider call) is charged by the budget's usual rules. The attack it closes: one tenant saturating a limit
 * shared by all tenants would burn everybody's budget with refusals.
 * Subclasses run it on each backend.
 */
@SpringBootTest(classes = NestedRefusalTests.App.class,
		properties = { "rate-limit.budgets.tenant.unit=USD", "rate-limit.budgets.tenant.amount=1.00",
				"rate-limit.budgets.tenant.window=day", "rate-limit.budgets.tenant.key=header('X-Tenant-Id')",
				"rate-limit.budgets.inner.amount=0.04", "rate-limit.budgets.inner.window=day",
				"rate-limit.budgets.inner.key=header('X-Tenant-Id')",
				"rate-limit.policies.provider-rate.capacity=1", "rate-limit.policies.provider-rate.refill=1/1h",
				"rate-limit.policies.provider-rate.key=header('X-Tenant-Id')",
				"rate-limit.concurrency.provider.permits=1" })
@AutoConfigureMockMvc
abstract class NestedRefusalTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	CostBudgets budgets;

	@Autowired
	LimitRegistry policies;

	@Autowired
	ConcurrencyLimiters concurrency;

	@Autowired
	LimitRegistry caps;

	private final String tenant = "t-" + UUID.randomUUID();

	@Test
	void callRefusedByANestedRateLimitLeavesTheBudgetUntouched() throws Exception {
		this.mvc.perform(post("/chat").header("X-Tenant-Id", this.tenant).param("maxCost", "0.20"))
			.andExpect(status().isOk());
		this.mvc.perform(post("/chat").header("X-Tenant-Id", this.tenant).param("maxCost", "0.20"))
			.andExpect(status().isServiceUnavailable())
			// A limit on the provider the handler calls is internal: the service's reduced capacity, not named.
			.andExpect(jsonPath("$.type").value(ProblemResponses.TEMPORARY_REDUCED_CAPACITY))
			.andExpect(header().string("Budget-Remaining",
					org.hamcrest.Matchers.startsWith("\"tenant\";w=\"day\";r=\"0.990000\";")));
		assertUntouchedBut(10_000);
	}

	@Test
	void callRefusedByANestedConcurrencyCapLeavesTheBudgetUntouched() throws Exception {
		// The cap's key is global: hold its one permit, as a call in flight would.
		try (Permit held = this.concurrency.acquire(this.caps.concurrency().find("provider").orElseThrow(), KeyContext.GLOBAL)) {
			this.mvc.perform(post("/chat-capped").header("X-Tenant-Id", this.tenant).param("maxCost", "0.20"))
				.andExpect(status().isServiceUnavailable())
				.andExpect(jsonPath("$['violated-policies']").doesNotExist());
		}
		assertUntouchedBut(0);
	}

	@Test
	void callRefusedByANestedBudgetLeavesTheOuterBudgetUntouched() throws Exception {
		this.mvc.perform(post("/chat-nested-budget").header("X-Tenant-Id", this.tenant).param("maxCost", "0.20"))
			.andExpect(status().isOk());
		this.mvc.perform(post("/chat-nested-budget").header("X-Tenant-Id", this.tenant).param("maxCost", "0.20"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(jsonPath("$.type").value(ProblemResponses.TEMPORARY_REDUCED_CAPACITY));
		assertUntouchedBut(10_000);
	}

	@Test
	void aRefusalAfterNestedLimitedWorkRanIsChargedByTheBudgetsRules() throws Exception {
		// The loop's first provider call ran (and was paid for); its second is refused.
		this.mvc.perform(post("/chat-loop").header("X-Tenant-Id", this.tenant).param("maxCost", "0.20"))
			.andExpect(status().isServiceUnavailable());
		// on-error keep: the estimate, since the actual cost cannot be computed from the refusal.
		assertUntouchedBut(200_000);
	}

	@Test
	void asynchronousWorkEndingInANestedRefusalIsChargedByTheBudgetsRules() throws Exception {
		// Work handed to another thread cannot tell whether paid work ran before the refusal: the
		// budget's own rules decide, as for any failure.
		for (int i = 0; i < 2; i++) {
			MvcResult started = this.mvc
				.perform(post("/chat-async").header("X-Tenant-Id", this.tenant).param("maxCost", "0.20"))
				.andExpect(request().asyncStarted())
				.andReturn();
			this.mvc.perform(asyncDispatch(started))
				.andExpect((i == 0) ? status().isOk() : status().isServiceUnavailable());
		}
		assertUntouchedBut(10_000 + 200_000);
	}

	@Test
	void failureOfTheWorkItselfStillFollowsOnError() throws Exception {
		assertThatException()
			.isThrownBy(() -> this.mvc.perform(post("/chat-fails").header("X-Tenant-Id", this.tenant)
				.param("maxCost", "0.20")))
			.withRootCauseInstanceOf(IllegalStateException.class);
		assertUntouchedBut(200_000);
	}

	/** Asserts that the tenant's budget holds no reservation and spent only what completed calls cost. */
	private void assertUntouchedBut(long spentMicros) {
		BudgetDecision state = this.budgets.remaining(this.policies.budgets().find("tenant").orElseThrow(), this.tenant);
		assertThat(state.spentMicros()).containsExactly(spentMicros);
		assertThat(state.reservedMicros()).isZero();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Provider provider() {
			return new Provider();
		}

		@Bean
		Chat chat(Provider provider) {
			return new Chat(provider);
		}

	}

	/** A paid provider, protected on our side by a rate, a cap and a budget of its own. */
	static class Provider {

		@RateLimited("provider-rate")
		public Map<String, Object> complete() {
			return Map.of("cost", new BigDecimal("0.01"));
		}

		@Concurrency("provider")
		public Map<String, Object> completeCapped() {
			return Map.of("cost", new BigDecimal("0.01"));
		}

		@CostBudget(value = "inner", estimate = "0.04", actual = "#result['cost']")
		public Map<String, Object> completeBudgeted() {
			return Map.of("cost", new BigDecimal("0.01"));
		}

	}

	@RestController
	static class Chat {

		private final Provider provider;

		Chat(Provider provider) {
			this.provider = provider;
		}

		@CostBudget(value = "tenant", estimate = "#maxCost", actual = "#result['cost']")
		@PostMapping("/chat")
		Map<String, Object> chat(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam String maxCost) {
			return this.provider.complete();
		}

		@CostBudget(value = "tenant", estimate = "#maxCost", actual = "#result['cost']")
		@PostMapping("/chat-capped")
		Map<String, Object> capped(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam String maxCost) {
			return this.provider.completeCapped();
		}

		@CostBudget(value = "tenant", estimate = "#maxCost", actual = "#result['cost']")
		@PostMapping("/chat-nested-budget")
		Map<String, Object> nestedBudget(@RequestHeader("X-Tenant-Id") String tenant,
				@RequestParam String maxCost) {
			return this.provider.completeBudgeted();
		}

		@CostBudget(value = "tenant", estimate = "#maxCost", actual = "#result['cost']")
		@PostMapping("/chat-loop")
		Map<String, Object> loop(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam String maxCost) {
			this.provider.complete();
			return this.provider.complete();
		}

		@CostBudget(value = "tenant", estimate = "#maxCost", actual = "#result['cost']")
		@PostMapping("/chat-async")
		CompletableFuture<Map<String, Object>> async(@RequestHeader("X-Tenant-Id") String tenant,
				@RequestParam String maxCost) {
			return CompletableFuture.supplyAsync(this.provider::complete);
		}

		@CostBudget(value = "tenant", estimate = "#maxCost", actual = "#result['cost']")
		@PostMapping("/chat-fails")
		Map<String, Object> fails(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam String maxCost) {
			throw new IllegalStateException("provider down after the call was paid for");
		}

	}

}

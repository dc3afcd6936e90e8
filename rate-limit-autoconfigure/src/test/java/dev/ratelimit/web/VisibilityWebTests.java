package dev.ratelimit.web;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

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
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.web.servlet.ProblemResponses;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Only the limits a caller can act on are told to it. The attack: read a
 * provider's rate shared by every tenant, and how much of it is left right now,
 * from the header fields of one's own requests, then time a burst to saturate
 * it. By default a limit is told only when it is keyed by the caller and
 * enforced on the request itself; a policy can opt in or out.
 */
@SpringBootTest(classes = VisibilityWebTests.App.class,
		properties = { "rate-limit.policies.tenant-chat.capacity=10", "rate-limit.policies.tenant-chat.refill=10/1h",
				"rate-limit.policies.tenant-chat.key=header('X-Tenant-Id')",
				"rate-limit.policies.provider-rate.capacity=3", "rate-limit.policies.provider-rate.refill=3/1h",
				"rate-limit.policies.per-tenant-service.capacity=100",
				"rate-limit.policies.per-tenant-service.refill=100/1h",
				"rate-limit.policies.per-tenant-service.key=header('X-Tenant-Id')",
				"rate-limit.policies.announced.capacity=50", "rate-limit.policies.announced.refill=50/1h",
				"rate-limit.policies.announced.visibility=public",
				"rate-limit.policies.secret.capacity=1", "rate-limit.policies.secret.refill=1/1h",
				"rate-limit.policies.secret.key=header('X-Tenant-Id')", "rate-limit.policies.secret.visibility=internal",
				"rate-limit.budgets.tenant-daily.amount=1.00", "rate-limit.budgets.tenant-daily.key=header('X-Tenant-Id')",
				"rate-limit.budgets.company-daily.amount=100.00" })
@AutoConfigureMockMvc
class VisibilityWebTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	ManualTimeSource clock;

	@BeforeEach
	void refill() {
		this.clock.advance(Duration.ofDays(1));
	}

	@Test
	void aGlobalLimitOnTheProviderAppearsInNoResponseHeader() throws Exception {
		MvcResult result = this.mvc.perform(post("/chat").header("X-Tenant-Id", tenant()))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"tenant-chat\";q=10;w=3600"))
			.andExpect(header().string("RateLimit", "\"tenant-chat\";r=9;t=360"))
			.andReturn();
		assertThat(headers(result)).doesNotContain("provider-rate").doesNotContain("per-tenant-service");
	}

	@Test
	void aRefusalByAnInternalLimitNamesNoPolicy() throws Exception {
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(post("/chat").header("X-Tenant-Id", tenant())).andExpect(status().isOk());
		}
		MvcResult refused = this.mvc.perform(post("/chat").header("X-Tenant-Id", tenant()))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().exists("Retry-After"))
			.andExpect(jsonPath("$.type").value(ProblemResponses.TEMPORARY_REDUCED_CAPACITY))
			.andExpect(jsonPath("$['violated-policies']").doesNotExist())
			.andExpect(jsonPath("$.policies").doesNotExist())
			.andReturn();
		assertThat(refused.getResponse().getContentAsString()).doesNotContain("provider-rate");
		assertThat(headers(refused)).doesNotContain("provider-rate");
	}

	@Test
	void aGlobalBudgetIsNotReportedButTheCallersOwnIs() throws Exception {
		MvcResult result = this.mvc.perform(post("/chat-budgeted").header("X-Tenant-Id", tenant()))
			.andExpect(status().isOk())
			.andExpect(header().string(BudgetHeaders.FIELD,
					org.hamcrest.Matchers.startsWith("\"tenant-daily\";w=\"day\";r=\"0.990000\"")))
			.andReturn();
		assertThat(headers(result)).doesNotContain("company-daily");
	}

	@Test
	void aPolicyCanOptInOrOut() throws Exception {
		String tenant = tenant();
		this.mvc.perform(post("/announced").header("X-Tenant-Id", tenant))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"announced\";q=50;w=3600"));
		this.mvc.perform(post("/secret").header("X-Tenant-Id", tenant))
			.andExpect(status().isOk())
			.andExpect(header().doesNotExist("RateLimit-Policy"));
		this.mvc.perform(post("/secret").header("X-Tenant-Id", tenant))
			.andExpect(status().isServiceUnavailable())
			.andExpect(jsonPath("$.type").value(ProblemResponses.TEMPORARY_REDUCED_CAPACITY))
			.andExpect(header().doesNotExist("RateLimit-Policy"));
	}

	private static String tenant() {
		return "t-" + UUID.randomUUID();
	}

	private static String headers(MvcResult result) {
		StringBuilder all = new StringBuilder();
		for (String name : result.getResponse().getHeaderNames()) {
			all.append(name).append(": ").append(result.getResponse().getHeaders(name)).append('\n');
		}
		return all.toString();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource(1_767_225_600_000_000L);
		}

		@Bean
		Provider provider() {
			return new Provider();
		}

		@Bean
		Chat chat(Provider provider) {
			return new Chat(provider);
		}

	}

	/** A provider shared by every tenant, limited on our side. */
	static class Provider {

		@RateLimited("provider-rate")
		@RateLimited("per-tenant-service")
		public Map<String, Object> complete() {
			return Map.of("cost", new BigDecimal("0.01"));
		}

	}

	@RestController
	static class Chat {

		private final Provider provider;

		Chat(Provider provider) {
			this.provider = provider;
		}

		@RateLimited("tenant-chat")
		@PostMapping("/chat")
		Map<String, Object> chat(@RequestHeader("X-Tenant-Id") String tenant) {
			return this.provider.complete();
		}

		@CostBudget(value = "tenant-daily", estimate = "0.05", actual = "#result['cost']")
		@CostBudget(value = "company-daily", estimate = "0.05", actual = "#result['cost']")
		@PostMapping("/chat-budgeted")
		Map<String, Object> budgeted(@RequestHeader("X-Tenant-Id") String tenant) {
			return Map.of("cost", new BigDecimal("0.01"));
		}

		@RateLimited("announced")
		@PostMapping("/announced")
		Map<String, Object> announced() {
			return Map.of("ok", true);
		}

		@RateLimited("secret")
		@PostMapping("/secret")
		Map<String, Object> secret(@RequestHeader("X-Tenant-Id") String tenant) {
			return Map.of("ok", true);
		}

	}

}

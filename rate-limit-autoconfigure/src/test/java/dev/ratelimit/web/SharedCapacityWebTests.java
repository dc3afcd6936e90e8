package dev.ratelimit.web;

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
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.RateLimited;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.key.KeyContext;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.web.servlet.ProblemResponses;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A refusal is the caller's own (429, {@code quota-exceeded}) only when it can
 * name a limit the caller may see. One by limits the caller is not told about
 * (shared capacity it can neither see nor act on) is the service's: 503 with
 * {@code Retry-After} and {@code temporary-reduced-capacity}, naming nothing,
 * whichever way the limit was applied (a route rule in the filter, an
 * annotation on the handler or on a service it calls) and whatever kind of
 * limit it is (a rate, a budget, a concurrency cap).
 */
@SpringBootTest(classes = SharedCapacityWebTests.App.class,
		properties = { "rate-limit.policies.mine.capacity=1", "rate-limit.policies.mine.refill=1/1h",
				"rate-limit.policies.mine.key=header('X-User-Id')", "rate-limit.policies.house-rate.capacity=1",
				"rate-limit.policies.house-rate.refill=1/1h", "rate-limit.routes[0].pattern=/house/**",
				"rate-limit.routes[0].policies=house-rate", "rate-limit.routes[1].pattern=/both/**",
				"rate-limit.routes[1].policies=mine,house-rate", "rate-limit.budgets.company-daily.amount=0.01",
				"rate-limit.concurrency.pool.permits=1", "rate-limit.concurrency.public-lane.permits=1",
				"rate-limit.concurrency.public-lane.visibility=public", "rate-limit.concurrency.public-pool.permits=1",
				"rate-limit.concurrency.public-pool.visibility=public",
				"rate-limit.concurrency.public-pool.rejection=service-unavailable" })
@AutoConfigureMockMvc
class SharedCapacityWebTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	ManualTimeSource clock;

	@Autowired
	ConcurrencyLimiters concurrency;

	@Autowired
	LimitRegistry limits;

	@Autowired
	Service service;

	@BeforeEach
	void refill() {
		// Every shared limit here is keyed global: a day later each is full again.
		this.clock.advance(Duration.ofDays(1));
	}

	@Test
	void aRouteRuleTheCallerIsNotToldOfAnswers503() throws Exception {
		call("/house/open", user()).andExpect(status().isOk());
		MvcResult refused = assertReducedCapacity(call("/house/open", user()), "3600");
		assertThat(refused.getResponse().getContentAsString()).doesNotContain("house-rate");
	}

	@Test
	void aCallerOverItsOwnLimitIsToldSoEvenWhenSharedCapacityRefusesToo() throws Exception {
		String user = user();
		call("/both/open", user).andExpect(status().isOk());
		// Both refuse: the caller's own limit is named, the shared one is not.
		call("/both/open", user).andExpect(status().isTooManyRequests())
			.andExpect(jsonPath("$.type").value(ProblemResponses.QUOTA_EXCEEDED))
			.andExpect(jsonPath("$['violated-policies']").value("mine"))
			.andExpect(jsonPath("$['violated-policies'].length()").value(1));
		// Only the shared one refuses another caller.
		assertReducedCapacity(call("/both/open", user()), "3600");
	}

	@Test
	void anAnnotationTheCallerIsNotToldOfAnswers503() throws Exception {
		String user = user();
		call("/internal", user).andExpect(status().isOk());
		assertReducedCapacity(call("/internal", user), "3600");
	}

	@Test
	void aRateOnAServiceTheHandlerCallsAnswers503() throws Exception {
		call("/nested-rate", user()).andExpect(status().isOk());
		assertReducedCapacity(call("/nested-rate", user()), "3600");
	}

	@Test
	void aSharedBudgetAnswers503() throws Exception {
		call("/nested-budget", user()).andExpect(status().isOk());
		assertReducedCapacity(call("/nested-budget", user()), null);
	}

	@Test
	void aSharedCapAnswers503WhateverItsRejection() throws Exception {
		// "pool" keeps the default rejection, too-many-requests: it is for a cap the caller may see.
		try (Permit held = hold("pool")) {
			assertReducedCapacity(call("/nested-cap", user()), "1");
		}
	}

	@Test
	void aCapTheCallerMaySeeAnswersAsItsRejectionSays() throws Exception {
		try (Permit held = hold("public-lane")) {
			call("/public-lane", user()).andExpect(status().isTooManyRequests())
				.andExpect(jsonPath("$.type").value(ProblemResponses.QUOTA_EXCEEDED))
				.andExpect(jsonPath("$['violated-policies'][0]").value("public-lane"));
		}
		try (Permit held = hold("public-pool")) {
			call("/public-pool", user()).andExpect(status().isServiceUnavailable())
				.andExpect(header().string("Retry-After", "1"))
				.andExpect(jsonPath("$.type").value(ProblemResponses.TEMPORARY_REDUCED_CAPACITY))
				.andExpect(jsonPath("$['violated-policies'][0]").value("public-pool"));
		}
	}

	@Test
	void aCallerOutsideAWebRequestGetsTheLimitersOwnException() {
		this.service.rate();
		// Whether a limit is shown is a matter of an HTTP answer: the exception names every limit.
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(this.service::rate)
			.satisfies((ex) -> assertThat(ex.getViolatedPolicies()).containsExactly("service-rate"));
	}

	private static MvcResult assertReducedCapacity(ResultActions refused, String retryAfter) throws Exception {
		MvcResult result = refused.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Cache-Control", "no-store"))
			.andExpect(content().contentTypeCompatibleWith("application/problem+json"))
			.andExpect(jsonPath("$.type").value(ProblemResponses.TEMPORARY_REDUCED_CAPACITY))
			.andExpect(jsonPath("$.title").value("Service Unavailable"))
			.andExpect(jsonPath("$.status").value(503))
			.andExpect(jsonPath("$['violated-policies']").doesNotExist())
			.andExpect(jsonPath("$.policies").doesNotExist())
			.andReturn();
		String sent = result.getResponse().getHeader("Retry-After");
		if (retryAfter != null) {
			assertThat(sent).isEqualTo(retryAfter);
		}
		else {
			assertThat(Long.parseLong(sent)).isPositive();
		}
		assertThat(result.getResponse().getContentAsString()).contains("retry after " + sent + " s");
		return result;
	}

	private Permit hold(String cap) {
		return this.concurrency.acquire(this.limits.concurrency().find(cap).orElseThrow(), KeyContext.GLOBAL);
	}

	private ResultActions call(String path, String user) throws Exception {
		return this.mvc.perform(get(path).header("X-User-Id", user));
	}

	private static String user() {
		return "u-" + UUID.randomUUID();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource(1_767_225_600_000_000L);
		}

		@Bean
		Service service() {
			return new Service();
		}

		@Bean
		Handlers handlers(Service service) {
			return new Handlers(service);
		}

	}

	/** Shared capacity behind the handlers: a rate, a budget and a cap, all keyed global. */
	static class Service {

		@RateLimited(policy = "service-rate", capacity = "1", refill = "1/1h")
		public String rate() {
			return "rate";
		}

		@CostBudget(value = "company-daily", estimate = "0.01")
		public String budget() {
			return "budget";
		}

		@Concurrency("pool")
		public String cap() {
			return "cap";
		}

	}

	@RestController
	static class Handlers {

		private final Service service;

		Handlers(Service service) {
			this.service = service;
		}

		@GetMapping({ "/house/open", "/both/open" })
		Map<String, String> open() {
			return Map.of("ok", "open");
		}

		@RateLimited(policy = "internal-user", capacity = "1", refill = "1/1h", key = "header('X-User-Id')",
				visibility = "internal")
		@GetMapping("/internal")
		Map<String, String> internal() {
			return Map.of("ok", "internal");
		}

		@GetMapping("/nested-rate")
		Map<String, String> nestedRate() {
			return Map.of("ok", this.service.rate());
		}

		@GetMapping("/nested-budget")
		Map<String, String> nestedBudget() {
			return Map.of("ok", this.service.budget());
		}

		@GetMapping("/nested-cap")
		Map<String, String> nestedCap() {
			return Map.of("ok", this.service.cap());
		}

		@Concurrency("public-lane")
		@GetMapping("/public-lane")
		Map<String, String> publicLane() {
			return Map.of("ok", "lane");
		}

		@Concurrency("public-pool")
		@GetMapping("/public-pool")
		Map<String, String> publicPool() {
			return Map.of("ok", "pool");
		}

	}

}

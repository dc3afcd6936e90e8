package dev.ratelimit.web;

import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Expressions that call an application bean which throws (its tenant
 * directory is down): SpEL hands the bean's exception on as it is, not as an
 * {@code EvaluationException}. Each place then follows the same rule as an
 * expression that cannot be evaluated, never a 500: a key is missing (the
 * policy's {@code missing-key} decides: one shared bucket by default, 400 with
 * {@code reject}), a cost is the caller's bad request (400), and an actual
 * cost that fails charges the estimate, so no spend is forgotten.
 */
@SpringBootTest(classes = ExpressionBeanFailureTests.App.class,
		properties = { "rate-limit.policies.per-tenant.capacity=100", "rate-limit.policies.per-tenant.refill=100/1h",
				"rate-limit.policies.per-tenant.key=@directory.tenant()",
				"rate-limit.policies.per-tenant.missing-key=reject", "rate-limit.routes[0].pattern=/routed/**",
				"rate-limit.routes[0].policies=per-tenant", "rate-limit.budgets.spend.amount=1.00",
				"rate-limit.budgets.spend.key=header('X-Tenant-Id')" })
@AutoConfigureMockMvc
class ExpressionBeanFailureTests {

	@Autowired
	MockMvc mvc;

	@AfterEach
	void directoryBack() {
		Directory.down = false;
	}

	@Test
	void aRouteKeyWhoseBeanThrowsIsAMissingKeyRejectedWith400() throws Exception {
		this.mvc.perform(get("/routed/hello")).andExpect(status().isOk());
		Directory.down = true;
		this.mvc.perform(get("/routed/hello")).andExpect(status().isBadRequest());
	}

	@Test
	void anAnnotationKeyWhoseBeanThrowsCountsInTheSharedBucketOfMissingKeys() throws Exception {
		Directory.down = true;
		this.mvc.perform(get("/shared")).andExpect(status().isOk());
		this.mvc.perform(get("/shared")).andExpect(status().isOk());
		// Not unlimited: every caller whose key failed shares one bucket of 2.
		this.mvc.perform(get("/shared")).andExpect(status().isTooManyRequests());
	}

	@Test
	void aCostWhoseBeanThrowsIsABadRequest() throws Exception {
		Directory.down = true;
		this.mvc.perform(get("/costly")).andExpect(status().isBadRequest());
	}

	@Test
	void anActualCostWhoseBeanThrowsChargesTheEstimate() throws Exception {
		Directory.down = true;
		this.mvc.perform(get("/spend").header("X-Tenant-Id", "acme")).andExpect(status().isOk());
		this.mvc.perform(get("/spend").header("X-Tenant-Id", "acme")).andExpect(status().isOk());
		// 0.40 each charged (had the failure released the reservations, 1.00 would still be left).
		this.mvc.perform(get("/spend").header("X-Tenant-Id", "acme")).andExpect(status().isTooManyRequests());
	}

	/** The application's directory of tenants and prices, down while {@link #down}. */
	public static class Directory {

		static volatile boolean down;

		public String tenant() {
			check();
			return "acme";
		}

		public long cost() {
			check();
			return 1;
		}

		public double actual() {
			check();
			return 0.10;
		}

		private static void check() {
			if (down) {
				throw new IllegalStateException("directory unavailable");
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Directory directory() {
			return new Directory();
		}

		@Bean
		Limited limited() {
			return new Limited();
		}

	}

	@RestController
	static class Limited {

		@GetMapping("/routed/hello")
		Map<String, String> hello() {
			return Map.of("ok", "hello");
		}

		@RateLimited(policy = "shared", capacity = "2", refill = "2/1h", key = "@directory.tenant()")
		@GetMapping("/shared")
		Map<String, String> shared() {
			return Map.of("ok", "shared");
		}

		@RateLimited(policy = "costly", capacity = "10", refill = "10/1h", cost = "@directory.cost()")
		@GetMapping("/costly")
		Map<String, String> costly() {
			return Map.of("ok", "costly");
		}

		@CostBudget(value = "spend", estimate = "0.40", actual = "@directory.actual()")
		@GetMapping("/spend")
		Map<String, String> spend() {
			return Map.of("ok", "spend");
		}

	}

}

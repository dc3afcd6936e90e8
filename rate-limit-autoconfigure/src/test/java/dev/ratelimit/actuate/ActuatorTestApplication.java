package dev.ratelimit.actuate;

import java.util.Map;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;

/**
 * A web application with a policy of every kind, applied by a route rule and by
 * annotations, for the actuator tests. Its properties come from the tests; its
 * nested controller is registered as a member.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
class ActuatorTestApplication {

	/**
	 * Adds the configuration every actuator test starts with: both endpoints
	 * exposed, the ratelimits endpoint's reset allowed (it is read-only by
	 * default), a policy applied by a route rule and an annotation, a budget.
	 * @param registry the test's property registry
	 */
	static void properties(DynamicPropertyRegistry registry) {
		defaultAccessProperties(registry);
		registry.add("management.endpoint.ratelimits.access", () -> "unrestricted");
	}

	/**
	 * Adds the configuration of {@link #properties} but leaves the ratelimits
	 * endpoint's access at its default.
	 * @param registry the test's property registry
	 */
	static void defaultAccessProperties(DynamicPropertyRegistry registry) {
		String[] properties = { "management.endpoints.web.exposure.include=ratelimits,health",
				"management.endpoint.health.show-details=always",
				// The endpoint's 400s carry their reason in the message.
				"spring.web.error.include-message=always", "rate-limit.policies.per-user.capacity=3",
				"rate-limit.policies.per-user.refill=3/1h", "rate-limit.policies.per-user.key=header('X-User-Id')",
				"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].methods=GET",
				"rate-limit.routes[0].policies=per-user", "rate-limit.budgets.tenant-daily.unit=USD",
				"rate-limit.budgets.tenant-daily.amount=1.00", "rate-limit.budgets.tenant-daily.window=day",
				"rate-limit.budgets.tenant-daily.key=header('X-Tenant-Id')" };
		for (String property : properties) {
			String[] pair = property.split("=", 2);
			registry.add(pair[0], () -> pair[1]);
		}
	}

	@RestController
	static class LimitedController {

		@GetMapping("/api/items")
		Map<String, String> items() {
			return Map.of("ok", "items");
		}

		// Limited by a route rule of the tests that configure one (the plans' tests).
		@PostMapping("/agents/run")
		Map<String, String> agentRun() {
			return Map.of("ok", "run");
		}

		@RateLimited("per-user")
		@PostMapping("/orders")
		Map<String, String> orders() {
			return Map.of("ok", "orders");
		}

		@RateLimited(policy = "runs", capacity = "2", refill = "2/1h", key = "header('X-User-Id')")
		@PostMapping("/runs")
		Map<String, String> runs() {
			return Map.of("ok", "runs");
		}

		@CostBudget(value = "tenant-daily", estimate = "0.10", actual = "0.25")
		@PostMapping("/chat")
		Map<String, String> chat() {
			return Map.of("ok", "chat");
		}

		@Concurrency(permits = "2")
		@GetMapping("/slow")
		Map<String, String> slow() {
			return Map.of("ok", "slow");
		}

	}

}

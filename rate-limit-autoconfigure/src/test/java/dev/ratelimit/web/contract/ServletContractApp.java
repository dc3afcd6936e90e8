package dev.ratelimit.web.contract;

import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;
import dev.ratelimit.support.HeldCalls;

/**
 * The conformance scenarios' Spring MVC application: the route scenarios'
 * endpoints, limited by route rules, and an annotated handler of the one
 * style a servlet handler has (a plain value) for each annotation scenario;
 * its member classes are its controllers.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfigurationWithoutSecurity
public class ServletContractApp {

	/** The scenarios' endpoints. */
	@RestController
	static class Endpoints {

		@GetMapping("/r/{scenario}/ok")
		public String ok() {
			return "ok";
		}

		@GetMapping("/r/outcome/fail")
		public ResponseEntity<String> fail() {
			return ResponseEntity.status(500).body("failed");
		}

		@GetMapping("/r/outcome/thrown")
		public String thrown() {
			throw new ResponseStatusException(HttpStatus.UNAUTHORIZED);
		}

		@GetMapping("/r/{scenario}/hold")
		public String hold(@RequestParam String id) {
			return HeldCalls.await(id);
		}

		@RateLimited("a-contract")
		@GetMapping("/a/plain/contract")
		public String contract() {
			return "ok";
		}

		@RateLimited("a-hidden")
		@GetMapping("/a/plain/hidden")
		public String hidden() {
			return "ok";
		}

		@RateLimited("a-missing")
		@GetMapping("/a/plain/missing")
		public String missing() {
			return "ok";
		}

		@RateLimited(value = "a-outcome", countWhen = "#exception != null")
		@GetMapping("/a/plain/outcome")
		public String outcome(@RequestParam(defaultValue = "false") boolean fail) {
			if (fail) {
				throw new IllegalStateException("failed");
			}
			return "ok";
		}

		@CostBudget(value = "a-budget", estimate = "0.40")
		@GetMapping("/a/plain/budget")
		public String budget() {
			return "ok";
		}

		@CostBudget(value = "a-budget", estimate = "0.40", actual = "0.10")
		@GetMapping("/a/plain/settled-budget")
		public String settledBudget() {
			return "ok";
		}

		@Concurrency("a-cap")
		@GetMapping("/a/plain/cap")
		public String cap(@RequestParam(required = false) String id) {
			return (id != null) ? HeldCalls.await(id) : "ok";
		}

	}

}

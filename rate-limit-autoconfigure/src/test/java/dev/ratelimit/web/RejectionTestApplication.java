package dev.ratelimit.web;

import java.util.Map;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.PropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.Concurrency;
import dev.ratelimit.RateLimited;
import dev.ratelimit.support.HeldCalls;

/**
 * An application refused in every way the HTTP contract knows: by a route rule
 * in the filter ({@code /api/**}, and the internal {@code /hidden/**}), by an
 * annotation on a handler, by an internal annotation, by a limited service a
 * handler calls, by an invalid cost (400) and by a shared concurrency cap (503).
 * Its policies are in {@code rejection-test.properties}; the nested controller
 * is registered as a member of this configuration.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
@PropertySource("classpath:rejection-test.properties")
class RejectionTestApplication {

	@Bean
	Reports reports() {
		return new Reports();
	}

	@RestController
	static class Refused {

		private final Reports reports;

		Refused(Reports reports) {
			this.reports = reports;
		}

		@GetMapping({ "/api/open", "/hidden/open" })
		Map<String, String> open() {
			return Map.of("ok", "open");
		}

		@RateLimited(policy = "annotated", capacity = "1", refill = "1/1h", key = "header('X-User-Id')")
		@GetMapping("/annotated")
		Map<String, String> annotated() {
			return Map.of("ok", "annotated");
		}

		@RateLimited(policy = "secret", capacity = "1", refill = "1/1h", key = "header('X-User-Id')",
				visibility = "internal")
		@GetMapping("/secret")
		Map<String, String> secret() {
			return Map.of("ok", "secret");
		}

		@GetMapping("/report")
		Map<String, String> report() {
			return Map.of("ok", this.reports.render());
		}

		@RateLimited(policy = "batch", capacity = "10", refill = "10/1h", key = "header('X-User-Id')", cost = "#size")
		@GetMapping("/batch")
		Map<String, String> batch(@RequestParam("size") String size) {
			return Map.of("ok", "batch");
		}

		@Concurrency("downstream")
		@GetMapping("/downstream")
		Map<String, String> downstream(@RequestParam(required = false) String id) {
			if (id != null) {
				// Held inside until the test lets go: this is the call in flight, not waiting for time.
				HeldCalls.await(id);
			}
			return Map.of("ok", "downstream");
		}

	}

	/** A service whose limit, keyed by the caller, is not on the request itself: never named. */
	static class Reports {

		@RateLimited(policy = "reports", capacity = "1", refill = "1/1h", key = "header('X-User-Id')")
		public String render() {
			return "report";
		}

	}

}

package dev.ratelimit.web;

import java.util.Map;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import dev.ratelimit.RateLimited;

/**
 * A small web application exercising the servlet integration. Its nested
 * components are registered as members of this configuration.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
class WebTestApplication {

	@RestController
	static class LimitedController {

		private final ReportService reports;

		LimitedController(ReportService reports) {
			this.reports = reports;
		}

		@RateLimited(policy = "global-runs", capacity = "100", refill = "100/1h", visibility = "public")
		@RateLimited(policy = "user-runs", capacity = "2", refill = "2/1h", key = "header('X-User-Id')")
		@PostMapping("/layered")
		Map<String, String> layered() {
			return Map.of("ok", "layered");
		}

		@RateLimited("by-principal")
		@GetMapping("/me")
		Map<String, String> me() {
			return Map.of("ok", "me");
		}

		@RateLimited(policy = "batch", capacity = "10", refill = "10/1h", key = "ip", cost = "#size")
		@PostMapping("/batch")
		Map<String, String> batch(@RequestParam("size") String size) {
			return Map.of("ok", "batch");
		}

		@RateLimited(policy = "body-cost", capacity = "10", refill = "10/1h", cost = "#body['n']",
				visibility = "public")
		@PostMapping("/body-cost")
		Map<String, String> bodyCost(@RequestBody Map<String, Object> body) {
			return Map.of("ok", "body-cost");
		}

		@GetMapping("/report")
		Map<String, String> report() {
			return Map.of("ok", this.reports.render());
		}

		@GetMapping("/api/open")
		Map<String, String> open() {
			return Map.of("ok", "open");
		}

		@RateLimited(policy = "api-extra", capacity = "3", refill = "3/1h", visibility = "public")
		@GetMapping("/api/annotated")
		Map<String, String> annotated() {
			return Map.of("ok", "annotated");
		}

	}

	@Service
	static class ReportService {

		@RateLimited(policy = "reports", capacity = "1", refill = "1/1h")
		public String render() {
			return "report";
		}

	}

	/**
	 * An application-wide catch-all handler, which must not turn a 429 into a 500.
	 */
	@RestControllerAdvice
	static class CatchAllAdvice {

		@ExceptionHandler(Exception.class)
		ResponseEntity<String> anything(Exception ex) {
			return ResponseEntity.internalServerError().body("boom");
		}

	}

}

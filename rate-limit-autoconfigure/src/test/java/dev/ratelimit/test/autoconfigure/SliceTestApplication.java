package dev.ratelimit.test.autoconfigure;

import java.util.Map;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.RateLimited;

/**
 * An application as a user writes it, found by the {@code @WebMvcTest} slices
 * of this package; its limits are in {@code slice.properties} and on
 * {@link RunController}.
 */
@SpringBootApplication
class SliceTestApplication {

	/** The properties file with the application's policies and route rule. */
	static final String PROPERTIES = "classpath:dev/ratelimit/test/autoconfigure/slice.properties";

	@RestController
	static class RunController {

		@RateLimited(policy = "runs", capacity = "2", refill = "2/1h", key = "header('X-User-Id')")
		@PostMapping("/runs")
		Map<String, String> run() {
			return Map.of("status", "queued");
		}

		@GetMapping("/api/items")
		Map<String, String> items() {
			return Map.of("items", "none");
		}

	}

}

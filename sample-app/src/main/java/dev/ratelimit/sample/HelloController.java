package dev.ratelimit.sample;

import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A plain endpoint with no annotation: the route rule for {@code /api/**} in
 * application.yml limits it per client IP in the servlet filter.
 */
@RestController
class HelloController {

	@GetMapping("/api/hello")
	Map<String, String> hello() {
		return Map.of("message", "hello");
	}

}

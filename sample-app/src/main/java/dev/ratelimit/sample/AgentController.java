package dev.ratelimit.sample;

import java.util.Map;
import java.util.UUID;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.RateLimited;

/**
 * Starts agent runs: expensive work, so each user gets a token bucket sized by
 * their plan (policy {@code agent-runs} in application.yml): free users 5 runs
 * at once refilled at one per second, pro users ({@link UserPlans}) 50 at once
 * refilled at ten per second.
 */
@RestController
class AgentController {

	@RateLimited("agent-runs")
	@PostMapping("/agent/run")
	Map<String, String> run(@RequestHeader(name = "X-User-Id", required = false) String user) {
		return Map.of("status", "queued", "run", UUID.randomUUID().toString());
	}

}

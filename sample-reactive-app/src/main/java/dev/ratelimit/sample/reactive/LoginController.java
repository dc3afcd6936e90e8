package dev.ratelimit.sample.reactive;

import java.util.Map;

import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.RateLimited;

/**
 * Brute-force protection by counting outcomes: the {@code failed-logins}
 * policy allows 5 failed logins per username per 15 minutes. Every attempt
 * takes its unit before the password is checked, so the 6th attempt after 5
 * failures is refused with 429 without a check; a successful login gives its
 * unit back once its {@code Mono} has answered.
 */
@RestController
class LoginController {

	/** The sample's one user. */
	private static final Map<String, String> USERS = Map.of("demo", "demo");

	@RateLimited(value = "failed-logins", key = "#login.username", countWhen = "#result.statusCode.value() == 401")
	@PostMapping("/login")
	Mono<ResponseEntity<Map<String, String>>> login(@RequestBody Login login) {
		if (login.password() != null && login.password().equals(USERS.get(login.username()))) {
			return Mono.just(ResponseEntity.ok(Map.of("user", login.username())));
		}
		return Mono.just(ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(Map.of("error", "wrong username or password")));
	}

	/**
	 * A login attempt.
	 *
	 * @param username the username
	 * @param password the password
	 */
	record Login(String username, String password) {
	}

}

package dev.ratelimit.outcome;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.RateLimited;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitPolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Counting by outcome, end to end: the brute-force case on an annotated
 * method (5 failed logins per username per 15 minutes, successes free), the
 * same under 64 threads on one username, and a route rule counting 401s.
 * Subclasses run it on each backend; every test uses usernames of its own.
 */
@SpringBootTest(classes = CountByOutcomeTests.App.class,
		properties = { "rate-limit.policies.failed-logins.algorithm=fixed-window",
				"rate-limit.policies.failed-logins.capacity=5", "rate-limit.policies.failed-logins.window=15m",
				"rate-limit.policies.failed-logins-bucket.capacity=5",
				"rate-limit.policies.failed-logins-bucket.refill=5/15m",
				"rate-limit.policies.route-failures.algorithm=sliding-window-log",
				"rate-limit.policies.route-failures.capacity=2", "rate-limit.policies.route-failures.window=15m",
				"rate-limit.policies.route-failures.key=header('X-User')",
				"rate-limit.routes[0].pattern=/route/**", "rate-limit.routes[0].policies=route-failures",
				"rate-limit.routes[0].count-on=401,403" })
@AutoConfigureMockMvc
abstract class CountByOutcomeTests {

	private static final int THREADS = 64;

	@Autowired
	Logins logins;

	@Autowired
	MockMvc mvc;

	@Autowired
	RateLimitBackend backend;

	@Autowired
	LimitRegistry limits;

	@Autowired
	LimitKeys keys;

	private final String user = "u-" + UUID.randomUUID();

	@Test
	void sixthAttemptAfterFiveFailuresIsRefusedBeforeThePasswordIsChecked() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.logins.login(this.user, "wrong")).isFalse();
		}
		// Even the right password: the 6th attempt never reaches the check.
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.logins.login(this.user, "secret"));
		assertThat(this.logins.checks(this.user)).isEqualTo(5);
	}

	@Test
	void successfulLoginsAreNotCounted() {
		for (int i = 0; i < 20; i++) {
			assertThat(this.logins.login(this.user, "secret")).isTrue();
		}
		for (int i = 0; i < 5; i++) {
			assertThat(this.logins.login(this.user, "wrong")).isFalse();
		}
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.logins.login(this.user, "secret"));
		assertThat(this.logins.checks(this.user)).isEqualTo(25);
	}

	@Test
	void exceptionsCountOnATokenBucketToo() {
		for (int i = 0; i < 10; i++) {
			this.logins.loginOrThrow(this.user, "secret");
		}
		for (int i = 0; i < 5; i++) {
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> this.logins.loginOrThrow(this.user, "wrong"));
		}
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.logins.loginOrThrow(this.user, "secret"));
		assertThat(this.logins.checks(this.user)).isEqualTo(15);
	}

	@Test
	void asynchronousResultsAreSettledWhenTheyComplete() {
		for (int i = 0; i < 10; i++) {
			assertThat(this.logins.loginLater(this.user, "secret").join()).isTrue();
		}
		for (int i = 0; i < 5; i++) {
			assertThat(this.logins.loginLater(this.user, "wrong").join()).isFalse();
		}
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.logins.loginLater(this.user, "secret"));
	}

	@Test
	void sixtyFourThreadsOnOneUsernameNeverGetMoreThanFiveFailuresAdmitted() throws Exception {
		AtomicInteger failedAdmitted = new AtomicInteger();
		AtomicInteger succeededAdmitted = new AtomicInteger();
		AtomicInteger refused = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(THREADS);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				// One thread in four guesses passwords, in the second half of its attempts; the others know theirs.
				boolean guesses = t % 4 == 0;
				done.add(pool.submit((Callable<Void>) () -> {
					start.await();
					for (int i = 0; i < 50; i++) {
						String password = (guesses && i >= 25) ? "wrong" : "secret";
						try {
							if (this.logins.login(this.user, password)) {
								succeededAdmitted.incrementAndGet();
							}
							else {
								failedAdmitted.incrementAndGet();
							}
						}
						catch (RateLimitExceededException ex) {
							refused.incrementAndGet();
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : done) {
				future.get();
			}
		}
		finally {
			pool.shutdownNow();
		}
		System.out.printf("count-by-outcome, 64 threads x 50 attempts on one username (%s): %d failures admitted, "
				+ "%d successes admitted, %d refused, at most %d checks at once%n", getClass().getSimpleName(),
				failedAdmitted.get(), succeededAdmitted.get(), refused.get(), this.logins.mostAtOnce());
		assertThat(failedAdmitted.get()).isLessThanOrEqualTo(5);
		assertThat(failedAdmitted.get() + succeededAdmitted.get() + refused.get()).isEqualTo(THREADS * 50);
		// Take before: never more than the limit's 5 attempts in flight, whatever their outcome.
		assertThat(this.logins.mostAtOnce()).isLessThanOrEqualTo(5);
		// Before any guess nothing counts, so successes are refused only while 5 attempts are in flight: the
		// first attempt on the key is always admitted.
		assertThat(succeededAdmitted.get()).isPositive();
		// Every success was given back and every admitted failure still counts: exactly the rest of the 5
		// failures can still be made, then even the right password is refused.
		RateLimitPolicy policy = this.limits.rateLimits().find("failed-logins").orElseThrow();
		assertThat(this.backend.peek(policy, this.keys.build(policy.name(), this.user)).remaining())
			.isEqualTo(5 - failedAdmitted.get());
		for (int i = failedAdmitted.get(); i < 5; i++) {
			assertThat(this.logins.login(this.user, "wrong")).isFalse();
		}
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.logins.login(this.user, "secret"));
		String other = this.user + "-after";
		assertThat(this.logins.login(other, "secret")).isTrue();
		assertThat(this.backend.peek(policy, this.keys.build(policy.name(), other)).remaining()).isEqualTo(5);
	}

	@Test
	void routeRuleCountsListedStatusesAndGivesBackTheOthers() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(post("/route/login").header("X-User", this.user).param("ok", "true"))
				.andExpect(status().isOk());
		}
		this.mvc.perform(post("/route/login").header("X-User", this.user).param("ok", "false"))
			.andExpect(status().isUnauthorized());
		this.mvc.perform(post("/route/login").header("X-User", this.user).param("ok", "false"))
			.andExpect(status().isUnauthorized());
		this.mvc.perform(post("/route/login").header("X-User", this.user).param("ok", "true"))
			.andExpect(status().isTooManyRequests());
	}

	@Test
	void routeRuleCountsAnExceptionAs500AndNot500IsNotListed() throws Exception {
		for (int i = 0; i < 3; i++) {
			try {
				this.mvc.perform(post("/route/boom").header("X-User", this.user));
			}
			catch (Exception ex) {
				// MockMvc rethrows the handler's exception: the filter saw it as a 500.
			}
		}
		// 500 is not in count-on: given back each time.
		this.mvc.perform(post("/route/login").header("X-User", this.user).param("ok", "false"))
			.andExpect(status().isUnauthorized());
		this.mvc.perform(post("/route/login").header("X-User", this.user).param("ok", "false"))
			.andExpect(status().isUnauthorized());
		this.mvc.perform(post("/route/login").header("X-User", this.user).param("ok", "true"))
			.andExpect(status().isTooManyRequests());
	}

	@Test
	void routeRuleSettlesAnAsynchronousRequestWhenItCompletes() throws Exception {
		for (int i = 0; i < 4; i++) {
			MvcResult started = this.mvc
				.perform(post("/route/login-async").header("X-User", this.user).param("ok", "true"))
				.andExpect(request().asyncStarted())
				.andReturn();
			this.mvc.perform(asyncDispatch(started)).andExpect(status().isOk());
		}
		for (int i = 0; i < 2; i++) {
			MvcResult started = this.mvc
				.perform(post("/route/login-async").header("X-User", this.user).param("ok", "false"))
				.andExpect(request().asyncStarted())
				.andReturn();
			this.mvc.perform(asyncDispatch(started)).andExpect(status().isUnauthorized());
		}
		this.mvc.perform(post("/route/login-async").header("X-User", this.user).param("ok", "true"))
			.andExpect(status().isTooManyRequests());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Logins logins() {
			return new Logins();
		}

		@Bean
		RouteLogins routeLogins() {
			return new RouteLogins();
		}

	}

	/** The sample's login check, counting how often the password was checked. */
	static class Logins {

		private final java.util.Map<String, AtomicInteger> checks = new java.util.concurrent.ConcurrentHashMap<>();

		private final AtomicInteger atOnce = new AtomicInteger();

		private final AtomicInteger mostAtOnce = new AtomicInteger();

		@RateLimited(value = "failed-logins", key = "#username", countWhen = "!#result")
		public boolean login(String username, String password) {
			int now = this.atOnce.incrementAndGet();
			this.mostAtOnce.accumulateAndGet(now, Math::max);
			try {
				this.checks.computeIfAbsent(username, (u) -> new AtomicInteger()).incrementAndGet();
				// A check that takes a moment (busy, as hashing a password is), so that attempts overlap.
				long until = System.nanoTime() + 200_000;
				while (System.nanoTime() < until) {
					Thread.onSpinWait();
				}
				return "secret".equals(password);
			}
			finally {
				this.atOnce.decrementAndGet();
			}
		}

		@RateLimited(value = "failed-logins-bucket", key = "#username", countWhen = "#exception != null")
		public void loginOrThrow(String username, String password) {
			this.checks.computeIfAbsent(username, (u) -> new AtomicInteger()).incrementAndGet();
			if (!"secret".equals(password)) {
				throw new IllegalArgumentException("wrong password");
			}
		}

		@RateLimited(value = "failed-logins-bucket", key = "#username", countWhen = "!#result")
		public CompletableFuture<Boolean> loginLater(String username, String password) {
			return CompletableFuture.supplyAsync(() -> "secret".equals(password));
		}

		int checks(String username) {
			return this.checks.getOrDefault(username, new AtomicInteger()).get();
		}

		int mostAtOnce() {
			return this.mostAtOnce.get();
		}

	}

	@RestController
	static class RouteLogins {

		@PostMapping("/route/login")
		ResponseEntity<String> login(@RequestParam boolean ok) {
			return ok ? ResponseEntity.ok("welcome") : ResponseEntity.status(401).body("no");
		}

		@PostMapping("/route/login-async")
		CompletableFuture<ResponseEntity<String>> loginAsync(@RequestParam boolean ok) {
			return CompletableFuture.supplyAsync(() -> login(ok));
		}

		@PostMapping("/route/boom")
		String boom() {
			throw new IllegalStateException("boom");
		}

	}

}

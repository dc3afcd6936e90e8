package dev.ratelimit.web.reactive;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.Concurrency;
import dev.ratelimit.RateLimited;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;
import dev.ratelimit.support.HeldCalls;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The rest of the servlet contract in a WebFlux application, over real HTTP
 * on the memory backend: fallback methods, plans, exemptions by client
 * address behind a trusted proxy, counting by outcome (a route rule's
 * {@code count-on} and an annotation's {@code countWhen}), and a concurrency
 * permit held until its {@code Mono} completes, fails or is cancelled.
 */
@SpringBootTest(classes = ReactiveContractTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive",
				// a fallback
				"rate-limit.policies.summaries.capacity=1", "rate-limit.policies.summaries.refill=1/1h",
				// plans
				"rate-limit.policies.planned.key=header('X-User-Id')",
				"rate-limit.policies.planned.plan=header('X-Plan')", "rate-limit.policies.planned.default-plan=free",
				"rate-limit.policies.planned.plans.free.capacity=1", "rate-limit.policies.planned.plans.free.refill=1/1h",
				"rate-limit.policies.planned.plans.pro.capacity=3", "rate-limit.policies.planned.plans.pro.refill=1/1h",
				// an exemption by client address, read behind a trusted proxy
				"rate-limit.client-ip.trusted-proxies=127.0.0.1,::1", "rate-limit.policies.per-ip.capacity=1",
				"rate-limit.policies.per-ip.refill=1/1h", "rate-limit.policies.per-ip.key=ip",
				"rate-limit.policies.per-ip.exempt.cidrs=10.0.0.0/8", "rate-limit.routes[0].pattern=/ip/**",
				"rate-limit.routes[0].policies=per-ip",
				// counting by outcome
				"rate-limit.policies.failed-logins.algorithm=fixed-window",
				"rate-limit.policies.failed-logins.capacity=2", "rate-limit.policies.failed-logins.window=1h",
				"rate-limit.policies.failed-logins.key=header('X-User')", "rate-limit.routes[1].pattern=/login",
				"rate-limit.routes[1].policies=failed-logins", "rate-limit.routes[1].count-on=401",
				"rate-limit.policies.failures.capacity=1", "rate-limit.policies.failures.refill=1/1h",
				// a cap
				"rate-limit.concurrency.one-at-a-time.permits=1" })
class ReactiveContractTests {

	@LocalServerPort
	int port;

	@Test
	void aFallbackAnswersTheRefusalInsteadOfTheContract() {
		assertThat(get("/summary").body()).isEqualTo("fresh");
		Answer fallback = get("/summary");
		assertThat(fallback.status()).isEqualTo(200);
		assertThat(fallback.body()).isEqualTo("cached after RateLimitExceededException");
	}

	@Test
	void aCallersPlanSetsItsLimit() {
		assertThat(get("/planned", "X-User-Id", "ann").status()).isEqualTo(200);
		assertThat(get("/planned", "X-User-Id", "ann").status()).isEqualTo(429);
		for (int i = 0; i < 3; i++) {
			assertThat(get("/planned", "X-User-Id", "bea", "X-Plan", "pro").status()).isEqualTo(200);
		}
		assertThat(get("/planned", "X-User-Id", "bea", "X-Plan", "pro").status()).isEqualTo(429);
	}

	@Test
	void anExemptClientBehindATrustedProxyIsNotLimitedAndOthersAreEachTheirOwn() {
		for (int i = 0; i < 3; i++) {
			assertThat(get("/ip/hello", "X-Forwarded-For", "10.1.2.3").status()).isEqualTo(200);
		}
		assertThat(get("/ip/hello", "X-Forwarded-For", "203.0.113.9").status()).isEqualTo(200);
		assertThat(get("/ip/hello", "X-Forwarded-For", "203.0.113.9").status()).isEqualTo(429);
		assertThat(get("/ip/hello", "X-Forwarded-For", "198.51.100.7").status()).isEqualTo(200);
	}

	@Test
	void aRouteRuleCountingOnlyFailuresGivesSuccessesBack() {
		for (int i = 0; i < 4; i++) {
			assertThat(get("/login", "X-User", "eve", "X-Password", "right").status()).isEqualTo(200);
		}
		assertThat(get("/login", "X-User", "eve", "X-Password", "wrong").status()).isEqualTo(401);
		assertThat(get("/login", "X-User", "eve", "X-Password", "wrong").status()).isEqualTo(401);
		Answer refused = get("/login", "X-User", "eve", "X-Password", "right");
		assertThat(refused.status()).isEqualTo(429);
	}

	@Test
	void anAnnotationCountingByItsResultGivesUncountedCallsBack() {
		for (int i = 0; i < 3; i++) {
			assertThat(get("/attempt", "X-Outcome", "ok").body()).isEqualTo("ok");
		}
		assertThat(get("/attempt", "X-Outcome", "fail").body()).isEqualTo("fail");
		assertThat(get("/attempt", "X-Outcome", "ok").status()).isEqualTo(503);
	}

	@Test
	void aPermitIsHeldUntilItsMonoCompletesFailsOrIsCancelled() {
		// Completes: held while the answer is pending, free once it is sent.
		String pending = UUID.randomUUID().toString();
		CompletableFuture<Answer> first = hold(pending);
		assertThat(get("/capped").status()).isEqualTo(503);
		HeldCalls.release(pending);
		assertThat(first.orTimeout(10, TimeUnit.SECONDS).join().body()).isEqualTo("released " + pending);
		// Fails: free once the error is answered.
		String failing = UUID.randomUUID().toString();
		CompletableFuture<Answer> second = hold(failing);
		HeldCalls.fail(failing, new IllegalStateException("down"));
		assertThat(second.orTimeout(10, TimeUnit.SECONDS).join().status()).isEqualTo(500);
		// Cancelled: its client gives up; free once the server sees it go.
		String abandoned = UUID.randomUUID().toString();
		hold(abandoned).cancel(true);
		try {
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(get("/capped").body()).isEqualTo("after"));
		}
		finally {
			HeldCalls.release(abandoned);
		}
	}

	/** Sends a capped call that the application holds in flight until the test releases it. */
	private CompletableFuture<Answer> hold(String id) {
		CompletableFuture<Answer> call = TestHttp.on(this.port).sendAsync("GET", "/capped?id=" + id);
		HeldCalls.entered(id).orTimeout(10, TimeUnit.SECONDS).join();
		return call;
	}

	private Answer get(String path, String... headers) {
		return TestHttp.on(this.port).get(path, headers);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfigurationWithoutSecurity
	@Import(Controller.class)
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource(1_767_225_600_000_000L);
		}

	}

	@RestController
	static class Controller {

		@RateLimited(value = "summaries", fallback = "cached")
		@GetMapping("/summary")
		public Mono<String> summary() {
			return Mono.just("fresh");
		}

		public Mono<String> cached(RateLimitException refusal) {
			return Mono.just("cached after " + refusal.getClass().getSimpleName());
		}

		@RateLimited("planned")
		@GetMapping("/planned")
		public Mono<String> planned() {
			return Mono.just("planned");
		}

		@GetMapping("/ip/hello")
		public Mono<String> hello() {
			return Mono.just("hello");
		}

		@GetMapping("/login")
		public Mono<ResponseEntity<String>> login(@RequestHeader("X-Password") String password) {
			return Mono.just("right".equals(password) ? ResponseEntity.ok("welcome")
					: ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("no"));
		}

		@RateLimited(value = "failures", countWhen = "#result == 'fail'")
		@GetMapping("/attempt")
		public Mono<String> attempt(@RequestHeader("X-Outcome") String outcome) {
			return Mono.just(outcome);
		}

		@Concurrency("one-at-a-time")
		@GetMapping("/capped")
		public Mono<String> capped(@RequestParam(required = false) String id) {
			return (id != null) ? Mono.fromFuture(() -> HeldCalls.enter(id)) : Mono.just("after");
		}

	}

}

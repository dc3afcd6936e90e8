package dev.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every algorithm through a real Spring Cloud Gateway (server WebFlux) routing
 * to a real backend, over HTTP, both ways a route can use a policy: the
 * starter's {@code RateLimit} filter and the gateway's own
 * {@code RequestRateLimiter} deciding with the starter's limiter. Each policy
 * admits 2, then refuses with the RateLimit fields and a {@code Retry-After}
 * of its exact wait rounded up, and admits again exactly when its algorithm
 * says: not a microsecond sooner (the injected clock moves by hand). A refused request never reaches the
 * backend. Subclasses run it on each backend.
 */
@SpringBootTest(classes = GatewayAlgorithmsTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
abstract class GatewayAlgorithmsTests {

	/** The clock's start: a multiple of every window here, so the first windows begin with the test. */
	static final long START = 1_767_225_600_000_000L;

	/**
	 * The windows and refill periods of the policies below, in µs: long enough
	 * that no key expires in Redis while a test runs (Redis expires keys by its
	 * own clock, which does not stop with the test's).
	 */
	private static final long PERIOD = 10_000_000;

	/**
	 * A policy of each algorithm, each admitting 2 at once: its properties, when
	 * a key refused after its two admitted calls is admitted again (µs after
	 * the first), and the window of its {@code RateLimit-Policy} item.
	 */
	enum Case {

		TOKEN_BUCKET("token-bucket", "refill=1/10s", PERIOD, 20),

		LEAKY_BUCKET("leaky-bucket", "refill=1/10s", PERIOD, 20),

		FIXED_WINDOW("fixed-window", "window=10s", PERIOD, 10),

		SLIDING_WINDOW_LOG("sliding-window-log", "window=10s", PERIOD, 10),

		/** The estimate {@code 2 × (10 s − elapsed) / 10 s + 1} fits in 2 once half the next window is gone. */
		SLIDING_WINDOW_COUNTER("sliding-window-counter", "window=10s", PERIOD + PERIOD / 2, 10),

		/** Serves calls 10 s apart: the second waits its turn, a third would wait too long. */
		LEAKY_BUCKET_SHAPING("leaky-bucket-shaping", "refill=1/10s", PERIOD, 20),

		/** Microseconds: a token every 2.500001 s. */
		MICROSECONDS("token-bucket", "refill=1/2500001us", 2_500_001, 6);

		final String algorithm;

		final String numbers;

		final long reopensAfter;

		final long windowSeconds;

		Case(String algorithm, String numbers, long reopensAfter, long windowSeconds) {
			this.algorithm = algorithm;
			this.numbers = numbers;
			this.reopensAfter = reopensAfter;
			this.windowSeconds = windowSeconds;
		}

		/** @return the policy's name */
		String policy() {
			return name().toLowerCase().replace('_', '-');
		}

		/** @return the {@code RateLimit-Policy} field of the policy alone */
		String policyField() {
			return "\"" + policy() + "\";q=2;w=" + this.windowSeconds;
		}

	}

	/** The two ways a gateway route applies a policy, and the path prefix of their routes. */
	enum Way {

		/** The starter's filter: {@code RateLimit=policy}. */
		FILTER,

		/** The gateway's {@code RequestRateLimiter} with {@code rateLimitGatewayLimiter}. */
		REQUEST_RATE_LIMITER;

		String path(Case c) {
			return "/" + name().toLowerCase() + "/" + c.policy();
		}

	}

	@LocalServerPort
	int port;

	@Autowired
	ManualTimeSource clock;

	@Autowired
	RecordingDecisionThreads waits;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		String backend = Backend.shared().uri();
		int route = 0;
		for (Case c : Case.values()) {
			String policy = "rate-limit.policies." + c.policy() + ".";
			registry.add(policy + "algorithm", () -> c.algorithm);
			registry.add(policy + "capacity", () -> 2);
			String[] numbers = c.numbers.split("=");
			registry.add(policy + numbers[0], () -> numbers[1]);
			registry.add(policy + "key", () -> "header('X-User')");
			for (Way way : Way.values()) {
				String prefix = "spring.cloud.gateway.server.webflux.routes[" + route++ + "].";
				registry.add(prefix + "id", () -> way.name().toLowerCase() + "-" + c.policy());
				registry.add(prefix + "uri", () -> backend);
				registry.add(prefix + "predicates[0]", () -> "Path=" + way.path(c) + "/**");
				if (way == Way.FILTER) {
					registry.add(prefix + "filters[0]", () -> "RateLimit=" + c.policy());
				}
				else {
					registry.add(prefix + "filters[0].name", () -> "RequestRateLimiter");
					registry.add(prefix + "filters[0].args.rate-limiter", () -> "#{@rateLimitGatewayLimiter}");
					registry.add(prefix + "filters[0].args.key-resolver", () -> "#{@userKeyResolver}");
					registry.add(prefix + "filters[0].args.rate-limit.policies", c::policy);
				}
			}
		}
	}

	@BeforeEach
	void startAtAWindowsBeginning() {
		long now = this.clock.currentTimeMicros();
		this.clock.advanceMicros(Math.floorMod(-now, PERIOD));
		this.waits.clear();
	}

	static Stream<Arguments> cases() {
		List<Arguments> cases = new ArrayList<>();
		for (Case c : Case.values()) {
			for (Way way : Way.values()) {
				cases.add(Arguments.of(c, way));
			}
		}
		return cases.stream();
	}

	@ParameterizedTest(name = "{0} through {1}")
	@MethodSource("cases")
	void admitsTheCapacityRefusesWithTheFieldsAndAdmitsAgainToTheMicrosecond(Case c, Way way) {
		String user = way + "-" + c + "-" + getClass().getSimpleName();
		String path = way.path(c) + "/items";
		for (int i = 0; i < 2; i++) {
			Answer allowed = TestHttp.on(this.port).get(path, "X-User", user);
			assertThat(allowed.status()).as("call %d", i).isEqualTo(200);
			assertThat(allowed.header(Backend.REACHED)).isEqualTo("reached");
			assertThat(allowed.body()).isEqualTo("backend " + path);
			assertThat(allowed.header("RateLimit-Policy")).isEqualTo(c.policyField());
			assertThat(allowed.header("RateLimit")).startsWith("\"" + c.policy() + "\";r=");
		}
		if (c == Case.LEAKY_BUCKET_SHAPING) {
			// The second call waited for its turn, exactly one period after the first's.
			assertThat(this.waits.waits()).containsExactly(PERIOD);
		}
		int reached = Backend.shared().hits(path);
		// Retry-After is the wait in whole seconds, rounded up: the time the test moves the clock by, to the µs.
		assertRefused(TestHttp.on(this.port).get(path, "X-User", user), way, c,
				(c.reopensAfter + 999_999) / 1_000_000);
		this.clock.advanceMicros(c.reopensAfter - 1);
		assertRefused(TestHttp.on(this.port).get(path, "X-User", user), way, c, 1);
		assertThat(Backend.shared().hits(path)).as("refused requests proxied").isEqualTo(reached);
		this.clock.advanceMicros(1);
		Answer again = TestHttp.on(this.port).get(path, "X-User", user);
		assertThat(again.status()).isEqualTo(200);
		assertThat(again.header(Backend.REACHED)).isEqualTo("reached");
		assertThat(again.header("RateLimit-Policy")).isEqualTo(c.policyField());
	}

	private static void assertRefused(Answer refused, Way way, Case c, long retryAfter) {
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.header(Backend.REACHED)).isNull();
		assertThat(refused.header("Retry-After")).isEqualTo(Long.toString(retryAfter));
		assertThat(refused.header("RateLimit-Policy")).isEqualTo(c.policyField());
		assertThat(refused.header("RateLimit")).matches("\"" + c.policy() + "\";r=0;t=[1-9][0-9]*");
		if (way == Way.FILTER) {
			// The HTTP contract's problem, as a route rule answers.
			assertThat(refused.header("Content-Type")).isEqualTo("application/problem+json");
			assertThat(refused.header("Cache-Control")).isEqualTo("no-store");
			assertThat(refused.body())
				.contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
				.contains("\"status\":429")
				.contains("\"detail\":\"Rate limit exceeded; retry after " + retryAfter + " s.\"")
				.contains("\"violated-policies\":[\"" + c.policy() + "\"]");
		}
		else {
			// The gateway's RequestRateLimiter writes its status with no body.
			assertThat(refused.body()).isEmpty();
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource(START);
		}

		/** Waits for a turn recorded, and over at once, on a reactive path that waits on a timer. */
		@Bean
		RecordingDecisionThreads rateLimitDecisionThreads() {
			return new RecordingDecisionThreads();
		}

		/** The key of RequestRateLimiter routes: the caller's X-User header. */
		@Bean
		KeyResolver userKeyResolver() {
			return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-User"));
		}

	}

}

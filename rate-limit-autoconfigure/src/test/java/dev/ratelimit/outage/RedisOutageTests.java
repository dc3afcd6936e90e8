package dev.ratelimit.outage;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.redis.RedisSilence;
import dev.ratelimit.resilience.DenyCachingBackend;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.matchesPattern;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Breaks the real redis-server under a running application: kills it, freezes
 * it with SIGSTOP, restarts it, flushes its script cache, and checks that every
 * failure mode does what it promises and that decisions return to Redis by
 * themselves.
 */
@SpringBootTest(classes = OutageTestApplication.class)
@AutoConfigureMockMvc
class RedisOutageTests {

	/** A server of this class's own: the tests kill it. */
	static final RedisServerFixture redis = RedisServerFixture.start();

	static final Duration TIMEOUT = Duration.ofMillis(300);

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		redis.register(registry);
		registry.add("rate-limit.backend", () -> "redis");
		registry.add("rate-limit.redis.timeout", TIMEOUT::toString);
		policy(registry, 0, "open", "capacity=1000", "refill=1000/1h", "failure-mode=open");
		policy(registry, 1, "closed", "capacity=1000", "refill=1000/1h", "failure-mode=closed");
		policy(registry, 2, "local", "capacity=3", "refill=3/1h", "failure-mode=local");
		policy(registry, 3, "shadow", "capacity=2", "refill=2/1h", "shadow=true");
	}

	private static void policy(DynamicPropertyRegistry registry, int route, String name, String... settings) {
		// Global policies are internal by default; these tests read their header fields.
		registry.add("rate-limit.policies." + name + ".visibility", () -> "public");
		for (String setting : settings) {
			String[] pair = setting.split("=", 2);
			registry.add("rate-limit.policies." + name + "." + pair[0], () -> pair[1]);
		}
		registry.add("rate-limit.routes[" + route + "].pattern", () -> "/" + name);
		registry.add("rate-limit.routes[" + route + "].policies", () -> name);
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Autowired
	MockMvc mvc;

	@Autowired
	RateLimitBackend backend;

	@Autowired
	RedisLimiterConnection connection;

	@Autowired
	OutageTestApplication.RecordingListener listener;

	@Autowired
	MeterRegistry meters;

	@BeforeEach
	void healthyRedis() {
		if (!redis.process().isAlive()) {
			redis.restart();
		}
		// After a restart by an earlier test, once the limiter's connection is back.
		awaitDecisionsOnRedis();
		redis.flushAll();
		this.listener.clear();
	}

	@Test
	void backendIsTheRedisBackendBehindTheDenyCache() {
		assertThat(this.backend).isInstanceOf(DenyCachingBackend.class);
	}

	@Test
	void redisKilledMidLoadEveryFailureModeDoesWhatItSaysAndDecisionsReturnAfterRestart() throws Exception {
		this.mvc.perform(get("/open")).andExpect(status().isOk()).andExpect(header().exists("RateLimit"));
		assertThat(redis.call("EXISTS", "rl:open:{global}")).isEqualTo(":1");

		double openFallbacks = count("rate.limit.fallbacks", "open", "mode", "open");
		double closedFallbacks = count("rate.limit.fallbacks", "closed", "mode", "closed");
		redis.kill();

		for (int i = 0; i < 20; i++) {
			long waited = timed(() -> this.mvc.perform(get("/open"))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit")));
			// Lettuce reconnects in the background; meanwhile a call is refused at once, not queued.
			assertThat(waited).as("request while Redis is down").isLessThan(TIMEOUT.toMillis() + 1_000);
		}
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/closed"))
				.andExpect(status().isServiceUnavailable())
				.andExpect(header().string("Retry-After", "1"))
				.andExpect(jsonPath("$.type")
					.value("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"));
		}
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/local")).andExpect(status().isOk());
		}
		this.mvc.perform(get("/local"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("RateLimit", "\"local\";r=0;t=3600"));
		assertThat(this.listener.events()).contains("backend down", "LOCAL_FALLBACK local denied");
		assertThat(count("rate.limit.fallbacks", "open", "mode", "open") - openFallbacks).isEqualTo(20);
		assertThat(count("rate.limit.fallbacks", "closed", "mode", "closed") - closedFallbacks).isEqualTo(5);

		redis.restart();
		awaitDecisionsOnRedis();
		this.mvc.perform(get("/local")).andExpect(status().isOk()).andExpect(header().string("RateLimit",
				"\"local\";r=2;t=1200"));
		assertThat(redis.call("EXISTS", "rl:local:{global}")).isEqualTo(":1");
		assertThat(this.listener.events()).contains("backend up");
	}

	@Test
	void redisPausedMidLoadCostsTheFirstCallTheTimeoutThenNothingAndDecisionsReturnWhenItThaws() throws Exception {
		this.mvc.perform(get("/open")).andExpect(status().isOk()).andExpect(header().exists("RateLimit"));

		redis.pause();
		try {
			long waited = timed(() -> this.mvc.perform(get("/open"))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit")));
			// Bounded by the limiter's own timeout, not the application's (60 s by default).
			assertThat(waited).as("request while Redis is frozen").isLessThan(TIMEOUT.toMillis() + 1_000);
			// The silence gate and Lettuce's command timeout both fire about the timeout after the call was sent
			// (Lettuce's on its timer's 100 ms tick): the call may be released by either one first.
			await().atMost(TIMEOUT.plusSeconds(1)).until(() -> silence().isSilent());
			for (int i = 0; i < 50; i++) {
				long again = timed(() -> this.mvc.perform(get("/open")).andExpect(status().isOk()));
				assertThat(again).as("request while Redis is known silent").isLessThan(TIMEOUT.toMillis() / 2);
			}
			this.mvc.perform(get("/closed")).andExpect(status().isServiceUnavailable());
		}
		finally {
			redis.resume();
		}
		// The probe kept in flight is answered as soon as Redis runs again: no open wait of a breaker.
		await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(5)).until(() -> !silence().isSilent());
		this.mvc.perform(get("/open")).andExpect(status().isOk()).andExpect(header().exists("RateLimit"));
		this.mvc.perform(get("/closed")).andExpect(status().isOk());
	}

	@Test
	void scriptAndFunctionFlushBetweenTwoRequestsIsInvisible() throws Exception {
		this.mvc.perform(get("/open")).andExpect(status().isOk()).andExpect(header().string("RateLimit",
				"\"open\";r=999;t=4"));
		// Both forms gone, as after a restart without persistence: FCALL, then EVALSHA, then EVAL.
		assertThat(redis.call("FUNCTION", "FLUSH")).isEqualTo("+OK");
		assertThat(redis.call("SCRIPT", "FLUSH")).isEqualTo("+OK");
		// t follows Redis' own clock: emptying a cache holding every script can take a few hundred ms.
		this.mvc.perform(get("/open")).andExpect(status().isOk()).andExpect(header().string("RateLimit",
				matchesPattern("\"open\";r=998;t=[78]")));
	}

	@Test
	void shadowPolicyOverItsLimitLetsEveryRequestThroughAndRecordsTheWouldBeRejections() throws Exception {
		double shadowDenials = count("rate.limit.decisions", "shadow", "outcome", "shadow");
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/shadow")).andExpect(status().isOk()).andExpect(header().doesNotExist("RateLimit"));
		}
		assertThat(this.listener.events()).containsExactly("SHADOW shadow allowed", "SHADOW shadow allowed",
				"SHADOW shadow denied", "SHADOW shadow denied", "SHADOW shadow denied");
		assertThat(count("rate.limit.decisions", "shadow", "outcome", "shadow") - shadowDenials).isEqualTo(3);
	}

	/**
	 * Waits until Lettuce has reconnected (with its backoff, after a restart) and
	 * a decision is made on Redis again.
	 */
	private void awaitDecisionsOnRedis() {
		await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50)).until(() -> {
			MvcResult result = this.mvc.perform(get("/open")).andReturn();
			return result.getResponse().getHeader("RateLimit") != null;
		});
		assertThat(silence().isSilent()).isFalse();
	}

	private double count(String name, String policy, String tag, String value) {
		Counter counter = this.meters.find(name).tag("policy", policy).tag(tag, value).counter();
		return (counter != null) ? counter.count() : 0;
	}

	private RedisSilence silence() {
		return this.connection.silence();
	}

	private static long timed(ThrowingRunnable action) throws Exception {
		long start = System.nanoTime();
		action.run();
		return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
	}

	@FunctionalInterface
	interface ThrowingRunnable {

		void run() throws Exception;

	}

}

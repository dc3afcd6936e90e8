package dev.ratelimit.outage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.support.DelayingTcpProxy;
import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Starts the application against a Redis whose new connections are slow,
 * refused or never answered, through a {@link DelayingTcpProxy}: the limiter
 * connects and loads its scripts while the application starts, with its own
 * connect timeout, so that the first decisions are made on Redis; and an
 * application that starts without Redis serves by its failure modes and goes
 * back to Redis by itself, without a request ever waiting for a connect.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisStartupTests {

	/** A server of this class's own: its statistics and script cache are read. */
	static final RedisServerFixture redis = RedisServerFixture.start();

	/** Longer than the limiter's timeout: a connect on a request thread cannot finish in time. */
	static final Duration NEW_CONNECTION_DELAY = Duration.ofMillis(300);

	static final Duration TIMEOUT = Duration.ofMillis(100);

	private DelayingTcpProxy proxy;

	private ConfigurableApplicationContext context;

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
		redis.call("SCRIPT", "FLUSH");
		redis.call("CONFIG", "RESETSTAT");
	}

	@AfterEach
	void stop() {
		if (this.context != null) {
			this.context.close();
		}
		if (this.proxy != null) {
			this.proxy.close();
		}
	}

	@Test
	void firstDecisionAfterStartUpIsMadeByRedisThoughEveryNewConnectionTakesLongerThanTheTimeout() {
		this.proxy = DelayingTcpProxy.start(redis.port(), NEW_CONNECTION_DELAY);
		start("2s");

		Answer open = get("/open");
		assertThat(open.status()).isEqualTo(200);
		assertThat(open.rateLimit()).isEqualTo("\"open\";r=999;t=4");
		assertThat(listener().events()).containsExactly("STORE open allowed");
		assertThat(redis.call("EXISTS", "rl:open:{global}")).isEqualTo(":1");
		assertThat(get("/closed").status()).isEqualTo(200);
		// The function library was loaded at start-up: each decision was one FCALL (after the
		// connector's probe of the library), none fell back.
		assertThat(commandCalls("fcall")).isEqualTo(1 + 2);
		assertThat(commandCalls("evalsha")).isZero();
		assertThat(commandCalls("eval")).isZero();
	}

	@Test
	void limiterHealthRightAfterStartUpIsUpThoughEveryNewConnectionTakesLongerThanTheTimeout() {
		this.proxy = DelayingTcpProxy.start(redis.port(), NEW_CONNECTION_DELAY);
		start("2s");

		Answer health = get("/actuator/health/rateLimit");
		assertThat(health.status()).isEqualTo(200);
		assertThat(health.body()).contains("\"status\":\"UP\"");
		assertThat(get("/actuator/health").status()).isEqualTo(200);
	}

	@Test
	void startsWithRedisDownServesByTheFailureModesAndReturnsToRedisWithoutARequestPayingForTheConnect(
			CapturedOutput output) {
		this.proxy = DelayingTcpProxy.start(redis.port(), Duration.ZERO);
		this.proxy.refuseNewConnections(true);
		start("2s");
		String address = "127.0.0.1:" + this.proxy.port();
		assertThat(output.getOut().lines().filter((line) -> line.contains(" WARN ") && line.contains(address)))
			.singleElement()
			.asString()
			.contains("failure mode");

		Answer open = get("/open");
		assertThat(open.status()).isEqualTo(200);
		assertThat(open.rateLimit()).isNull();
		assertThat(get("/closed").status()).isEqualTo(503);
		Answer health = get("/actuator/health/rateLimit");
		assertThat(health.status()).isEqualTo(503);
		assertThat(health.body()).contains("\"status\":\"DOWN\"", "\"redis\":\"unavailable\"", "\"closed\"");
		assertThat(get("/actuator/health/readiness").status()).isEqualTo(200);
		assertThat(get("/actuator/health/liveness").status()).isEqualTo(200);

		// Redis comes up, but every new connection to it now takes a second to open.
		Duration delay = Duration.ofSeconds(1);
		this.proxy.delayNewConnections(delay);
		this.proxy.refuseNewConnections(false);
		List<Long> latencies = new ArrayList<>();
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
			long start = System.nanoTime();
			Answer response = get("/open");
			latencies.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
			assertThat(response.status()).isEqualTo(200);
			return response.rateLimit() != null;
		});
		// No request waited for the connect: the limiter's own thread made it.
		assertThat(latencies).as("request latencies in ms while Redis came up").allMatch((ms) -> ms < delay.toMillis() / 2);
		assertThat(listener().events()).contains("STORE open allowed");
		assertThat(get("/closed").status()).isEqualTo(200);
		assertThat(get("/actuator/health/rateLimit").status()).isEqualTo(200);
	}

	@Test
	void startUpWaitsForARedisThatNeverAnswersNoLongerThanTheConnectTimeout() {
		// The TCP connect succeeds, the handshake is never answered: a frozen or overloaded server.
		this.proxy = DelayingTcpProxy.start(redis.port(), Duration.ofHours(1));
		long started = System.nanoTime();
		start("3s");
		long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
		assertThat(took).as("start-up in ms").isBetween(3_000L, 3_000L + 10_000L);

		long requestStart = System.nanoTime();
		assertThat(get("/open").status()).isEqualTo(200);
		assertThat(get("/closed").status()).isEqualTo(503);
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - requestStart)).isLessThan(TIMEOUT.toMillis() * 5);
	}

	private void start(String connectTimeout) {
		List<String> properties = new ArrayList<>(List.of("server.port=0", "spring.main.banner-mode=off",
				"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + this.proxy.port(),
				"rate-limit.backend=redis", "rate-limit.redis.timeout=" + TIMEOUT.toMillis() + "ms",
				"rate-limit.redis.connect-timeout=" + connectTimeout,
				"management.endpoints.web.exposure.include=health", "management.endpoint.health.show-details=always",
				"rate-limit.policies.open.capacity=1000", "rate-limit.policies.open.refill=1000/1h",
				"rate-limit.policies.open.failure-mode=open",
				// A global policy is internal by default; these tests read its header fields.
				"rate-limit.policies.open.visibility=public",
				"rate-limit.policies.closed.capacity=1000", "rate-limit.policies.closed.refill=1000/1h",
				"rate-limit.policies.closed.failure-mode=closed", "rate-limit.routes[0].pattern=/open",
				"rate-limit.routes[0].policies=open", "rate-limit.routes[1].pattern=/closed",
				"rate-limit.routes[1].policies=closed"));
		this.context = new SpringApplicationBuilder(OutageTestApplication.class).properties(properties.toArray(String[]::new))
			.run();
	}

	private OutageTestApplication.RecordingListener listener() {
		return this.context.getBean(OutageTestApplication.RecordingListener.class);
	}

	private long commandCalls(String command) {
		LettuceConnectionFactory direct = redis.newEvalShaConnectionFactory();
		try {
			Properties stats = new StringRedisTemplate(direct).execute(
					(RedisCallback<Properties>) (connection) -> connection.serverCommands().info("commandstats"));
			String line = stats.getProperty("cmdstat_" + command);
			return (line != null) ? Long.parseLong(line.replaceAll("^calls=(\\d+),.*$", "$1")) : 0;
		}
		finally {
			direct.destroy();
		}
	}

	private Answer get(String path) {
		return TestHttp.on(this.context.getEnvironment().getRequiredProperty("local.server.port", Integer.class))
			.get(path);
	}

}

package dev.ratelimit.outage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.Limits;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.live.LimitOverrides;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis outage under a running application, with decisions of every kind
 * flowing (a rate limit, a budget, a distributed concurrency cap), stored
 * overrides read and the fleet's counts published as the starter does by
 * default: the whole log of the outage is one warning when the limiter stops
 * reaching Redis, naming what failed and that the failure modes decide, and
 * one line when decisions are back on Redis; not one per component, per kind
 * of limit or per call. A second outage is told of again, once.
 * <p>
 * The outage is a frozen Redis ({@code SIGSTOP}), or a killed one started again
 * on its port: then a call can find the connection gone in the instant before
 * the limiter hears that its channel ended, or after one of its channels is
 * back and before the others are, and the limiter's loggers still log one
 * warning and one line when decisions are back (Lettuce logs its reconnection
 * under its own loggers, see the docs). Each is repeated, to meet those races.
 */
class OneWarningPerOutageTests {

	/** A loopback address with its port, as the limiter and Lettuce write it: {@code 127.0.0.1/<unresolved>:6379}. */
	private static final Pattern LOOPBACK_ADDRESS = Pattern.compile("127\\.0\\.0\\.1[^:\\s]*:(\\d+)");

	/** A server of this class's own: the tests freeze and kill it. */
	static final RedisServerFixture redis = RedisServerFixture.start();

	/** How long each outage lasts, at least: the outage the warnings were counted in. */
	static final Duration OUTAGE = Duration.ofSeconds(2);

	private final ListAppender<ILoggingEvent> log = new ListAppender<>();

	private ConfigurableApplicationContext context;

	/** How many threads decide at once, as an application's request threads do. */
	static final int TRAFFIC_THREADS = 8;

	private final List<Thread> traffic = new ArrayList<>();

	private final AtomicBoolean running = new AtomicBoolean(true);

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	/** How many times a killed Redis is started again in one test. */
	static final int KILLS = 5;

	@BeforeEach
	void start() {
		if (!redis.process().isAlive()) {
			redis.restart();
		}
		redis.flushAll();
		this.context = new SpringApplicationBuilder(OutageTestApplication.class, Watching.class)
			.properties("spring.main.web-application-type=none", "spring.main.banner-mode=off",
					"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
					"rate-limit.backend=redis", "rate-limit.redis.overrides-poll-interval=100ms",
					"rate-limit.heavy-hitters.publish-interval=1s", "rate-limit.policies.per-user.capacity=1000000",
					"rate-limit.policies.per-user.refill=1000/1s", "rate-limit.policies.per-user.key=#user",
					"rate-limit.budgets.spend.amount=1000000.00", "rate-limit.budgets.spend.window=day",
					"rate-limit.concurrency.exports.permits=4", "rate-limit.concurrency.exports.scope=distributed")
			.run();
		// Spring Boot's logging system is set up by now: the JDK's loggers reach Logback too.
		this.log.start();
		root().addAppender(this.log);
		for (int i = 1; i <= TRAFFIC_THREADS; i++) {
			Thread thread = new Thread(this::decideEveryKind, "traffic-" + i);
			thread.setDaemon(true);
			thread.start();
			this.traffic.add(thread);
		}
		awaitBackOnRedis();
		assertThat(this.context.getBean(LimitOverrides.class)).isNotNull();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> !redis.call("KEYS", "*{%fleet}*").equals("*0"));
		this.log.list.clear();
	}

	@AfterEach
	void stop() throws InterruptedException {
		this.running.set(false);
		for (Thread thread : this.traffic) {
			thread.join(10_000);
		}
		root().detachAppender(this.log);
		if (this.context != null) {
			this.context.close();
		}
	}

	@Test
	void aFrozenRedisIsOneWarningAndOneLineWhenDecisionsAreBackEachTime() {
		for (int outage = 1; outage <= 2; outage++) {
			this.log.list.clear();
			long frozeAt = System.nanoTime();
			redis.pause();
			try {
				awaitEveryKindFailingFor(frozeAt);
			}
			finally {
				redis.resume();
			}
			awaitBackOnRedis();
			assertOneWarningAndOneLineBack("outage " + outage, lines(""), "does not answer");
		}
	}

	@Test
	void aKilledRedisIsOneWarningAndOneLineWhenDecisionsAreBackEachTime() {
		for (int outage = 1; outage <= KILLS; outage++) {
			this.log.list.clear();
			long killedAt = System.nanoTime();
			redis.kill();
			try {
				awaitEveryKindFailingFor(killedAt);
			}
			finally {
				redis.restart();
			}
			awaitBackOnRedis();
			assertOneWarningAndOneLineBack("killed " + outage, lines("dev.ratelimit."), "lost its connection");
			// Lettuce tells of its own reconnection of the limiter's connection, under its own loggers (see the docs).
			assertThat(lines("")).filteredOn((line) -> !line.contains(" dev.ratelimit."))
				.allMatch((line) -> line.contains(" io.lettuce.core.protocol."));
		}
	}

	/**
	 * The lines logged at INFO and above since the log was cleared, by loggers
	 * whose name starts so, except those naming another server: the contexts
	 * other test classes left open in this JVM tell of their own, stopped,
	 * servers (Lettuce reconnecting to them), which is not this outage.
	 */
	private List<String> lines(String loggers) {
		List<String> lines = new ArrayList<>();
		for (ILoggingEvent event : List.copyOf(this.log.list)) {
			String message = event.getFormattedMessage();
			if (event.getLevel().isGreaterOrEqual(Level.INFO) && event.getLoggerName().startsWith(loggers)
					&& !namesAnotherServer(message)) {
				lines.add(event.getLevel() + " " + event.getLoggerName() + " " + message);
			}
		}
		return lines;
	}

	/** Whether a line names a server on loopback other than this class's. */
	private static boolean namesAnotherServer(String message) {
		Matcher address = LOOPBACK_ADDRESS.matcher(message);
		while (address.find()) {
			if (Integer.parseInt(address.group(1)) != redis.port()) {
				return true;
			}
		}
		return false;
	}

	private static void assertOneWarningAndOneLineBack(String outage, List<String> lines, String what) {
		String seen = outage + ", logged:\n" + String.join("\n", lines);
		assertThat(lines).as(seen).hasSize(2);
		assertThat(lines.get(0)).as(seen)
			.startsWith("WARN ")
			.contains("Redis", what, "failure mode");
		assertThat(lines.get(1)).as(seen).startsWith("INFO ").contains("decisions are back");
	}

	/**
	 * Waits until every kind of limit has found Redis failing, the overrides and
	 * the fleet's counts have been tried meanwhile, and the outage has lasted
	 * {@link #OUTAGE}.
	 */
	private void awaitEveryKindFailingFor(long since) {
		Watching watching = this.context.getBean(Watching.class);
		await().atMost(Duration.ofSeconds(30))
			.until(() -> watching.down().containsAll(EnumSet.allOf(LimitKind.class))
					&& System.nanoTime() - since >= OUTAGE.toNanos());
	}

	/**
	 * Waits until every kind of limit is decided on Redis again, and the
	 * overrides and the fleet's counts have been read and written twice since,
	 * so that what each logs when it works again has been logged.
	 */
	private void awaitBackOnRedis() {
		Watching watching = this.context.getBean(Watching.class);
		RedisLimiterConnection connection = this.context.getBean(RedisLimiterConnection.class);
		await().atMost(Duration.ofSeconds(30))
			.until(() -> watching.down().isEmpty() && !connection.silence().isAnySilent() && connection.isConnected());
		long reads = commandCalls("get");
		long publishes = commandCalls("hset");
		await().atMost(Duration.ofSeconds(10))
			.until(() -> commandCalls("get") >= reads + 2 && commandCalls("hset") >= publishes + 2);
	}

	/** Decides each kind of limit in turn until the test ends; what Redis cannot decide follows its failure mode. */
	private void decideEveryKind() {
		Limits limits = this.context.getBean(Limits.class);
		while (this.running.get()) {
			try {
				limits.tryAcquire("per-user", "alice", 1);
				Reservation reservation = limits.reserve("spend", "acme", "0.01");
				reservation.settle(5_000);
			}
			catch (RuntimeException ex) {
				// The closed budget refuses while Redis cannot answer: its failure mode.
			}
			try (Permit permit = limits.permit("exports", null)) {
				// Held for no time: taken and released on Redis.
			}
			catch (RuntimeException ex) {
				// A cap that cannot reach Redis follows its failure mode.
			}
		}
	}

	private static long commandCalls(String command) {
		LettuceConnectionFactory direct = redis.newEvalShaConnectionFactory();
		try {
			Properties stats = new StringRedisTemplate(direct).execute(
					(RedisCallback<Properties>) (connection) -> connection.serverCommands().info("commandstats"));
			String line = (stats != null) ? stats.getProperty("cmdstat_" + command) : null;
			return (line != null) ? Long.parseLong(line.replaceAll("^calls=(\\d+),.*$", "$1")) : 0;
		}
		finally {
			direct.destroy();
		}
	}

	private static Logger root() {
		return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
	}

	/** Which kinds of limit find their store failing now. */
	@Configuration(proxyBeanMethods = false)
	static class Watching implements LimitListener {

		private final Set<LimitKind> down = EnumSet.noneOf(LimitKind.class);

		@Override
		public synchronized void storeAvailabilityChanged(LimitKind kind, boolean available,
				@Nullable RuntimeException cause) {
			if (available) {
				this.down.remove(kind);
			}
			else {
				this.down.add(kind);
			}
		}

		synchronized Set<LimitKind> down() {
			return EnumSet.copyOf(this.down);
		}

	}

}

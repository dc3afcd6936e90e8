package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.client.LocalPauseStore;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.live.QuotaText;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The limiter's scripts as Redis functions on a real {@code redis-server} of
 * its own: loaded at connect and called with {@code FCALL}; sent as
 * {@code EVALSHA} where Redis refuses functions (an ACL without them, or
 * without {@code FCALL}) or the limiter is told not to use them; and never a
 * lost or doubled decision when the server loses the library (a
 * {@code FUNCTION FLUSH}, a restart without persistence), which the connector
 * then loads again in the background.
 */
class RedisFunctionsTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final RateLimitPolicy THREE = RateLimitPolicy.builder("three").capacity(3).refill("3/1h").build();

	private final RedisServerFixture redis = RedisServerFixture.start();

	private final LettuceConnectionFactory admin = this.redis.newEvalShaConnectionFactory();

	private RedisLimiterConnection limiter;

	@AfterEach
	void close() {
		if (this.limiter != null) {
			this.limiter.close();
		}
		this.admin.destroy();
		this.redis.close();
	}

	@Test
	void scriptsAreLoadedAsOneLibraryAndCalledAsFunctions() {
		this.limiter = connect(application(null, null), true);
		assertThat(this.limiter.usesFunctions()).isTrue();
		assertThat(this.redis.call("FUNCTION", "LIST", "LIBRARYNAME", LuaScripts.libraryName())).isEqualTo("*1");
		resetStats();

		RedisRateLimitBackend backend = new RedisRateLimitBackend(this.limiter.connectionFactory());
		assertThat(remaining(backend, 4)).containsExactly(2L, 1L, 0L, -1L);

		assertThat(calls("fcall")).isEqualTo(4);
		assertThat(calls("evalsha") + calls("eval")).isZero();
	}

	/**
	 * The shared connection's commands are looked up once, not under the
	 * factory's lock at every decision: a reset of that connection must not
	 * leave decisions on the closed one.
	 */
	@Test
	void decisionsAfterTheSharedConnectionIsResetUseTheNewOne() {
		this.limiter = connect(application(null, null), true);
		LimiterLettuceConnectionFactory factory = (LimiterLettuceConnectionFactory) this.limiter.connectionFactory();
		RedisRateLimitBackend backend = new RedisRateLimitBackend(factory);
		assertThat(remaining(backend, 1)).containsExactly(2L);
		var before = factory.sharedCommands();
		factory.resetConnection();
		var after = factory.sharedCommands();
		assertThat(after).isNotSameAs(before);
		assertThat(before.isOpen()).isFalse();
		assertThat(after.isOpen()).isTrue();
		assertThat(remaining(backend, 2)).containsExactly(1L, 0L);
	}

	@Test
	void everyKindOfScriptIsAFunction() {
		this.limiter = connect(application(null, null), true);
		resetStats();
		RedisConnectionFactory factory = this.limiter.connectionFactory();
		new RedisBudgetStore(factory).peek(BudgetPolicy.builder("spend").limit("day", "5.00").build(),
				"rl:spend:{a}");
		new RedisPermitStore(factory).holders(ConcurrencyPolicy.builder("jobs").permits(2).build(), "rl:jobs:{a}");
		RedisPauseStore pauses = new RedisPauseStore(factory, "rl", new LocalPauseStore(TimeSource.system()));
		pauses.pause("provider", 5_000_000);
		assertThat(pauses.remainingMicros("provider")).isPositive();
		RedisOverrideStore overrides = new RedisOverrideStore(factory, "rl");
		overrides.put("three", "", QuotaText.parse("capacity=5;refill=5/1s"));
		overrides.remove("three", "");

		assertThat(calls("fcall")).isEqualTo(6);
		assertThat(calls("evalsha") + calls("eval")).isZero();
	}

	@Test
	void aFlushedLibraryCostsNoDecisionAndIsLoadedAgain() {
		this.limiter = connect(application(null, null), true);
		RedisRateLimitBackend backend = new RedisRateLimitBackend(this.limiter.connectionFactory());
		assertThat(remaining(backend, 1)).containsExactly(2L);

		assertThat(this.redis.call("FUNCTION", "FLUSH")).isEqualTo("+OK");
		resetStats();
		// The FCALL fails before running; the same call goes as EVALSHA, counted once.
		assertThat(remaining(backend, 1)).containsExactly(1L);
		assertThat(calls("evalsha") + calls("eval")).isEqualTo(1);

		await().atMost(Duration.ofSeconds(30)).until(this.limiter::usesFunctions);
		assertThat(libraryLoaded()).isTrue();
		resetStats();
		assertThat(remaining(backend, 2)).containsExactly(0L, -1L);
		assertThat(calls("fcall")).isEqualTo(2);
		assertThat(calls("evalsha") + calls("eval")).isZero();
	}

	@Test
	void aRestartWithoutPersistenceIsSurvivedTheSameWay() {
		this.limiter = connect(application(null, null), true);
		RedisRateLimitBackend backend = new RedisRateLimitBackend(this.limiter.connectionFactory());
		assertThat(remaining(backend, 1)).containsExactly(2L);

		this.redis.kill();
		this.redis.restart();
		// The server came back empty: no state, no scripts, no library. Lettuce reconnects by itself.
		await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> remaining(backend, 1).get(0) == 2L);
		await().atMost(Duration.ofSeconds(30)).until(this.limiter::usesFunctions);
		resetStats();
		assertThat(remaining(backend, 3)).containsExactly(1L, 0L, -1L);
		assertThat(calls("fcall")).isEqualTo(3);
	}

	@Test
	void anAclWithoutFunctionsGetsEvalSha() {
		assertThat(this.redis.call("ACL", "SETUSER", "limiter", "on", ">secret", "~*", "&*", "+@all", "-function"))
			.isEqualTo("+OK");
		this.limiter = connect(application("limiter", "secret"), true);
		assertThat(this.limiter.isConnected()).isTrue();
		assertThat(this.limiter.usesFunctions()).isFalse();
		assertThat(libraryLoaded()).isFalse();
		resetStats();

		RedisRateLimitBackend backend = new RedisRateLimitBackend(this.limiter.connectionFactory());
		assertThat(remaining(backend, 4)).containsExactly(2L, 1L, 0L, -1L);
		assertThat(calls("evalsha")).isEqualTo(4);
		assertThat(calls("fcall")).isZero();
	}

	@Test
	void anAclThatLoadsFunctionsButCannotCallThemGetsEvalSha() {
		assertThat(this.redis.call("ACL", "SETUSER", "limiter", "on", ">secret", "~*", "&*", "+@all", "-fcall"))
			.isEqualTo("+OK");
		this.limiter = connect(application("limiter", "secret"), true);
		// Loaded, but the probe's FCALL was refused: no decision is ever sent as one.
		assertThat(libraryLoaded()).isTrue();
		assertThat(this.limiter.usesFunctions()).isFalse();
		resetStats();

		RedisRateLimitBackend backend = new RedisRateLimitBackend(this.limiter.connectionFactory());
		assertThat(remaining(backend, 4)).containsExactly(2L, 1L, 0L, -1L);
		assertThat(calls("evalsha")).isEqualTo(4);
	}

	@Test
	void functionsCanBeTurnedOff() {
		this.limiter = connect(application(null, null), false);
		assertThat(this.limiter.usesFunctions()).isFalse();
		assertThat(libraryLoaded()).isFalse();
		resetStats();

		RedisRateLimitBackend backend = new RedisRateLimitBackend(this.limiter.connectionFactory());
		assertThat(remaining(backend, 2)).containsExactly(2L, 1L);
		assertThat(calls("evalsha")).isEqualTo(2);
		assertThat(calls("fcall")).isZero();
	}

	private LettuceConnectionFactory application(String user, String password) {
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration("127.0.0.1", this.redis.port());
		if (user != null) {
			configuration.setUsername(user);
			configuration.setPassword(RedisPassword.of(password));
		}
		// Never started: the limiter copies its configuration.
		return new LettuceConnectionFactory(configuration);
	}

	private static RedisLimiterConnection connect(LettuceConnectionFactory application, boolean functions) {
		RedisLimiterConnection limiter = new RedisLimiterConnection(application, TIMEOUT, TIMEOUT, functions);
		limiter.connect();
		assertThat(limiter.isConnected()).as("connected").isTrue();
		return limiter;
	}

	private static List<Long> remaining(RedisRateLimitBackend backend, int calls) {
		List<Long> remaining = new ArrayList<>();
		for (int i = 0; i < calls; i++) {
			Decision decision = backend.tryConsume(THREE, "rl:three:{someone}", 1);
			remaining.add(decision.allowed() ? decision.remaining() : -1L);
		}
		return remaining;
	}

	private boolean libraryLoaded() {
		return this.redis.call("FUNCTION", "LIST", "LIBRARYNAME", LuaScripts.libraryName()).equals("*1");
	}

	private void resetStats() {
		assertThat(this.redis.call("CONFIG", "RESETSTAT")).isEqualTo("+OK");
	}

	private long calls(String command) {
		return CommandStats.calls(this.admin, command);
	}

}

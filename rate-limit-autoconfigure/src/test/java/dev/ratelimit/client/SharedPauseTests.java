package dev.ratelimit.client;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.HttpMethod;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.client.FakeProvider.Answer;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.redis.RedisPauseStore;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of an application sharing one redis-server, each with its own
 * clock and sleeper: a pause the provider asked of one holds on the other.
 */
class SharedPauseTests {

	private static final RedisServerFixture redis = RedisServerFixture.shared();

	private final FakeProvider provider = new FakeProvider();

	@BeforeEach
	void flush() {
		redis.flushAll();
	}

	@AfterEach
	void stopProvider() {
		this.provider.close();
	}

	@Test
	void aPauseReportedToOneInstanceHoldsOnASecondInstanceSharingRedis() {
		this.provider.then(Answer.of(429, "Retry-After", "30"));
		Instance a = new Instance();
		Instance b = new Instance();
		a.runner().run((first) -> b.runner().run((second) -> {
			assertThat(first.getBean(PauseStore.class)).isInstanceOf(RedisPauseStore.class);
			// A is told to stop for 30 s; with one attempt it hands the 429 back without waiting.
			assertThat(ProviderClientTests.status(client(first), HttpMethod.GET)).isEqualTo(429);
			assertThat(a.sleeper.sleeps()).isEmpty();
			long ttl = pttl();
			assertThat(ttl).isBetween(29_000L, 30_000L);

			// B was never told; it waits out what is left of A's pause before calling.
			assertThat(ProviderClientTests.status(client(second), HttpMethod.GET)).isEqualTo(200);
			List<Duration> waits = b.sleeper.sleeps();
			assertThat(waits).hasSize(1);
			assertThat(waits.get(0)).isBetween(Duration.ofSeconds(29), Duration.ofSeconds(30));
			assertThat(this.provider.seen()).hasSize(2);
		}));
	}

	@Test
	void aPauseReportedToARestClientHoldsForAWebClientOnASecondInstance() {
		this.provider.then(Answer.of(429, "Retry-After", "30"));
		Instance a = new Instance();
		Instance b = new Instance();
		RecordingScheduler timer = new RecordingScheduler(b.clock);
		a.runner().run((first) -> b.runner().run((second) -> {
			assertThat(ProviderClientTests.status(client(first), HttpMethod.GET)).isEqualTo(429);
			// B calls through a WebClient: it waits out what is left of A's pause, as a delay.
			WebClient web = new ProviderWebClients(second.getBean(ProviderClients.class), WebClient::builder,
					(client) -> new ProviderExchangeFilter(client, timer, Schedulers.boundedElastic()))
				.builder("provider")
				.build();
			assertThat(ProviderWebClientTests.status(web, HttpMethod.GET)).isEqualTo(200);
			assertThat(timer.delays()).singleElement()
				.satisfies((wait) -> assertThat(wait).isBetween(Duration.ofSeconds(29), Duration.ofSeconds(30)));
			assertThat(b.sleeper.sleeps()).isEmpty();
			assertThat(this.provider.seen()).hasSize(2);
		}));
	}

	@Test
	void aShorterPauseNeverCutsALongerOneShort() {
		this.provider.then(Answer.of(429, "Retry-After", "30"), Answer.of(429, "Retry-After", "2"));
		Instance a = new Instance();
		a.runner().withPropertyValues("rate-limit.clients.provider.deadline=1m").run((context) -> {
			PauseStore store = context.getBean(PauseStore.class);
			store.pause("provider", 30_000_000L);
			store.pause("provider", 2_000_000L);
			assertThat(pttl()).isGreaterThan(29_000L);
			assertThat(store.remainingMicros("provider")).isGreaterThan(29_000_000L);
		});
	}

	@Test
	void aRedisThatCannotAnswerNeverBlocksACallAndThePauseHoldsLocally() {
		try (RedisServerFixture own = RedisServerFixture.start()) {
			this.provider.then(Answer.of(429, "Retry-After", "5"));
			Instance a = new Instance();
			a.runner(own).withPropertyValues("rate-limit.clients.provider.max-attempts=2").run((context) -> {
				own.kill();
				RestClient client = client(context);
				assertThat(ProviderClientTests.status(client, HttpMethod.GET)).isEqualTo(200);
				// Waited out on this instance's own record of the pause.
				assertThat(a.sleeper.sleeps()).containsExactly(Duration.ofSeconds(5));
				assertThat(ProviderClientTests.status(client, HttpMethod.GET)).isEqualTo(200);
				assertThat(this.provider.seen()).hasSize(3);
			});
		}
	}

	private static long pttl() {
		// The fixture answers in RESP: ":29994".
		return Long.parseLong(redis.call("PTTL", "rl:{%client:provider}:pause").replace(":", "").trim());
	}

	private static RestClient client(org.springframework.context.ApplicationContext context) {
		return context.getBean(ProviderClients.class).builder("provider").build();
	}

	/** One instance: its own clock and sleeper. */
	private final class Instance {

		final ManualTimeSource clock = new ManualTimeSource();

		final RecordingSleeper sleeper = new RecordingSleeper(this.clock, true);

		ApplicationContextRunner runner() {
			return runner(redis);
		}

		ApplicationContextRunner runner(RedisServerFixture server) {
			return new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
						RateLimitAutoConfiguration.class))
				.withBean(TimeSource.class, () -> this.clock)
				.withBean(Sleeper.class, () -> this.sleeper)
				.withPropertyValues("rate-limit.backend=redis", "spring.data.redis.host=127.0.0.1",
						"spring.data.redis.port=" + server.port(),
						"rate-limit.clients.provider.base-url=" + SharedPauseTests.this.provider.url(),
						"rate-limit.clients.provider.max-attempts=1", "rate-limit.clients.provider.pause-jitter=0");
		}

	}

}

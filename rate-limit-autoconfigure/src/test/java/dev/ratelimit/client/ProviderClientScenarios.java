package dev.ratelimit.client;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Random;
import java.util.function.BiConsumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpMethod;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.client.FakeProvider.Answer;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The provider client's scenarios, written once for every HTTP client it is
 * bound to, against a real HTTP server standing in for the provider, on the
 * in-memory backend. A subclass binds them to one client through a small port:
 * how to build the client, call the provider with it, read the waits it took
 * and know its connection failure. Time is a manual clock: no test waits for
 * real.
 *
 * @param <C> the client under test
 */
abstract class ProviderClientScenarios<C> {

	/** A whole second, so that an HTTP-date (second precision) reads exactly. */
	protected static final long START_MICROS = 1_700_000_000_000_000L;

	protected final FakeProvider provider = new FakeProvider();

	protected final ManualTimeSource clock = new ManualTimeSource(START_MICROS);

	/** The limiter's waits; the blocking client's retries and pauses too. */
	protected final RecordingSleeper sleeper = new RecordingSleeper(this.clock, true);

	protected JitterSource jitter = JitterSource.random();

	/** Where the limiter's waits go: the recording sleeper unless a test says otherwise. */
	protected Sleeper limiterSleeper = this.sleeper;

	protected final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withBean(TimeSource.class, () -> this.clock)
		.withBean(Sleeper.class, () -> (micros) -> this.limiterSleeper.sleepMicros(micros))
		.withBean(JitterSource.class, () -> (() -> this.jitter.next()))
		.withPropertyValues("rate-limit.clients.provider.base-url=" + this.provider.url(),
				"rate-limit.clients.provider.pause-jitter=0");

	/**
	 * Builds the client under test for the provider of a started application.
	 * @param context the application
	 * @return the client
	 */
	protected abstract C client(ApplicationContext context);

	/**
	 * Calls the provider with the client under test and reads the whole answer.
	 * @param client the client
	 * @param method the HTTP method
	 * @return the status the client handed back
	 */
	protected abstract int call(C client, HttpMethod method);

	/** @return the waits the client under test took between attempts and for pauses */
	protected abstract List<Duration> waits();

	/** @return the same waits, in microseconds */
	protected abstract List<Long> waitMicros();

	/** @return what the client under test throws when the provider cannot be reached */
	protected abstract Class<? extends Exception> connectionFailure();

	@AfterEach
	void stopProvider() {
		this.provider.close();
	}

	@Test
	void retryAfterInSecondsIsWaitedOut() {
		this.provider.then(Answer.of(429, "Retry-After", "7"));
		run((client, context) -> {
			assertThat(call(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(waits()).containsExactly(Duration.ofSeconds(7));
			assertThat(this.provider.seen()).hasSize(2);
		});
	}

	@Test
	void retryAfterAsAnHttpDateIsWaitedOut() {
		String in12Seconds = DateTimeFormatter.RFC_1123_DATE_TIME
			.format(Instant.ofEpochSecond(START_MICROS / 1_000_000L + 12).atOffset(ZoneOffset.UTC));
		this.provider.then(Answer.of(503, "Retry-After", in12Seconds));
		run((client, context) -> {
			assertThat(call(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(waits()).containsExactly(Duration.ofSeconds(12));
			assertThat(this.provider.seen()).hasSize(2);
		});
	}

	@Test
	void backoffWithFullJitterStaysBelowItsDoublingCeilings() {
		this.jitter = () -> 0.999;
		this.provider.then(Answer.of(503), Answer.of(503), Answer.of(429), Answer.of(503));
		run((client, context) -> {
			assertThat(call(client, HttpMethod.GET)).isEqualTo(200);
			// Ceilings 100, 200, 300 (capped), 300 ms; each wait just below its ceiling.
			assertThat(waitMicros()).containsExactly(99_900L, 199_800L, 299_700L, 299_700L);
		}, "rate-limit.clients.provider.max-attempts=5", "rate-limit.clients.provider.backoff=100ms",
				"rate-limit.clients.provider.max-backoff=300ms");
	}

	@Test
	void theAttemptBoundHolds() {
		this.jitter = () -> 0.5;
		this.provider.otherwise(() -> Answer.of(503));
		run((client, context) -> {
			assertThat(call(client, HttpMethod.GET)).isEqualTo(503);
			assertThat(this.provider.seen()).hasSize(4);
			assertThat(waits()).hasSize(3);
		}, "rate-limit.clients.provider.max-attempts=4");
	}

	@Test
	void theDeadlineEndsTheRetriesWithTheProvidersLastAnswer() {
		this.jitter = () -> 0.99;
		this.provider.otherwise(() -> Answer.of(503));
		run((client, context) -> {
			assertThat(call(client, HttpMethod.GET)).isEqualTo(503);
			// 0 s, 0.99 s, 1.98 s; a third wait would end at 2.97 s, past the 2.5 s deadline.
			assertThat(this.provider.seen()).hasSize(3);
			assertThat(waits()).containsExactly(Duration.ofMillis(990), Duration.ofMillis(990));
		}, "rate-limit.clients.provider.max-attempts=10", "rate-limit.clients.provider.backoff=1s",
				"rate-limit.clients.provider.max-backoff=1s", "rate-limit.clients.provider.deadline=2500ms");
	}

	@Test
	void aRetryAfterPastTheDeadlineFailsAtOnceAndTheNextCallDoesNotAsk() {
		this.provider.then(Answer.of(429, "Retry-After", "60"));
		run((client, context) -> {
			assertThat(call(client, HttpMethod.GET)).isEqualTo(429);
			assertThat(waits()).isEmpty();
			assertThat(this.provider.seen()).hasSize(1);
			// The next call does not even ask: the pause outlasts its deadline.
			assertThatExceptionOfType(ProviderPausedException.class).isThrownBy(() -> call(client, HttpMethod.GET))
				.satisfies((ex) -> assertThat(ex.getRetryAfterMicros()).isEqualTo(60_000_000L));
			assertThat(this.provider.seen()).hasSize(1);
		}, "rate-limit.clients.provider.deadline=30s");
	}

	@Test
	void aPostIsNotRetriedByDefault() {
		this.provider.then(Answer.of(429, "Retry-After", "1"));
		run((client, context) -> {
			assertThat(call(client, HttpMethod.POST)).isEqualTo(429);
			assertThat(this.provider.seen()).hasSize(1);
			assertThat(waits()).isEmpty();
		});
	}

	@Test
	void aPauseHoldsForTheNextCallsAndAddsAtMostItsJitter() {
		this.jitter = () -> 0.75;
		this.provider.then(Answer.of(429, "Retry-After", "4"));
		run((client, context) -> {
			assertThat(call(client, HttpMethod.GET)).isEqualTo(429);
			// The caller that was told: no retry (max-attempts 1); the next call waits 4 s + 0.75 x 2 s.
			assertThat(call(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(waits()).containsExactly(Duration.ofMillis(5_500));
		}, "rate-limit.clients.provider.max-attempts=1", "rate-limit.clients.provider.pause-jitter=2s");
	}

	@Test
	void backoffDrawsItsWaitUniformlyBelowTheCeiling() {
		Random random = new Random(7);
		this.jitter = random::nextDouble;
		this.provider.otherwise(() -> Answer.of(503));
		run((client, context) -> {
			for (int i = 0; i < 50; i++) {
				assertThat(call(client, HttpMethod.GET)).isEqualTo(503);
			}
			List<Long> sleeps = waitMicros();
			assertThat(sleeps).hasSize(100);
			for (int i = 0; i < sleeps.size(); i += 2) {
				assertThat(sleeps.get(i)).isBetween(0L, 99_999L);
				assertThat(sleeps.get(i + 1)).isBetween(0L, 199_999L);
			}
			// Full jitter, not "ceiling plus a little": waits fall anywhere from near 0 to near the ceiling.
			assertThat(sleeps.stream().mapToLong(Long::longValue).min().getAsLong()).isLessThan(10_000L);
		}, "rate-limit.clients.provider.max-attempts=3", "rate-limit.clients.provider.backoff=100ms");
	}

	@Test
	void anExhaustedIetfQuotaMakesTheNextCallWait() {
		this.provider.then(Answer.of(200, "RateLimit-Policy", "\"day\";q=1000;w=86400, \"burst\";q=10;w=1",
				"RateLimit", "\"day\";r=400;t=3000, \"burst\";r=0;t=3"));
		run((client, context) -> {
			assertThat(call(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(call(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(waits()).containsExactly(Duration.ofSeconds(3));
		});
	}

	@ParameterizedTest
	@CsvSource({ "1m0s, PT1M", "3s, PT3S" })
	void vendorRemainingRequestsAtZeroMakesTheNextCallWaitForTheReset(String reset, Duration wait) {
		this.provider.then(Answer.of(200, "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", reset,
				"x-ratelimit-remaining-tokens", "1200", "x-ratelimit-reset-tokens", "20ms"));
		run((client, context) -> {
			assertThat(call(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(waits()).isEmpty();
			assertThat(call(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(waits()).containsExactly(wait);
			assertThat(this.provider.seen()).hasSize(2);
		}, "rate-limit.clients.provider.deadline=2m");
	}

	@Test
	void aFailureToConnectIsRetriedAndThenReported() throws Exception {
		String closed;
		try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
			closed = "http://127.0.0.1:" + socket.getLocalPort();
		}
		this.jitter = () -> 0.5;
		run((client, context) -> {
			assertThatExceptionOfType(connectionFailure()).isThrownBy(() -> call(client, HttpMethod.GET));
			assertThat(waits()).containsExactly(Duration.ofMillis(100), Duration.ofMillis(200));
		}, "rate-limit.clients.provider.base-url=" + closed);
	}

	@Test
	void everyAttemptTakesTheProvidersRateAndPermit() {
		this.provider.then(Answer.of(503));
		this.jitter = () -> 0.5;
		run((client, context) -> {
			// Two attempts take the bucket's two units; the permit is given back each time (cap of 1).
			assertThat(call(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(inFlight(context)).isZero();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> call(client, HttpMethod.GET));
			assertThat(this.provider.seen()).hasSize(2);
		}, limits("capacity=2", "refill=1/1h"));
	}

	/**
	 * Runs a scenario on a started application with the client under test.
	 * @param test the scenario, given the client and the application
	 * @param properties further properties
	 */
	protected void run(BiConsumer<C, ApplicationContext> test, String... properties) {
		this.contextRunner.withPropertyValues(properties).run((context) -> {
			assertThat(context).hasNotFailed();
			test.accept(client(context), context);
		});
	}

	/**
	 * The provider limited by a rate policy (waiting up to 2 s), a cap of one
	 * call in flight and three attempts.
	 * @param rate the rate policy's properties, such as {@code capacity=2}
	 * @return the properties
	 */
	protected static String[] limits(String... rate) {
		String[] properties = new String[rate.length + 5];
		for (int i = 0; i < rate.length; i++) {
			properties[i] = "rate-limit.policies.provider-rate." + rate[i];
		}
		properties[rate.length] = "rate-limit.policies.provider-rate.max-wait=2s";
		properties[rate.length + 1] = "rate-limit.concurrency.provider.permits=1";
		properties[rate.length + 2] = "rate-limit.clients.provider.rate-limit=provider-rate";
		properties[rate.length + 3] = "rate-limit.clients.provider.concurrency=provider";
		properties[rate.length + 4] = "rate-limit.clients.provider.max-attempts=3";
		return properties;
	}

	/**
	 * The provider's calls in flight.
	 * @param context the application
	 * @return how many hold a permit
	 */
	protected static int inFlight(ApplicationContext context) {
		return context.getBean(ConcurrencyLimiters.class).inFlight("provider");
	}

}

package dev.ratelimit.client;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpMethod;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;

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
 * The provider client's {@code WebClient} filter against a real HTTP server
 * standing in for the provider, on the in-memory backend. Its waits are
 * delays on a {@link RecordingScheduler}, which moves the manual clock instead
 * of waiting; the limiter's waits go to the {@link RecordingSleeper}, as on the
 * blocking side. No test waits for real.
 */
class ProviderWebClientTests {

	/** A whole second, so that an HTTP-date (second precision) reads exactly. */
	private static final long START_MICROS = 1_700_000_000_000_000L;

	private final FakeProvider provider = new FakeProvider();

	private final ManualTimeSource clock = new ManualTimeSource(START_MICROS);

	private final RecordingSleeper sleeper = new RecordingSleeper(this.clock, true);

	private final RecordingScheduler timer = new RecordingScheduler(this.clock);

	private JitterSource jitter = JitterSource.random();

	private Sleeper limiterSleeper = this.sleeper;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withBean(TimeSource.class, () -> this.clock)
		.withBean(Sleeper.class, () -> (micros) -> this.limiterSleeper.sleepMicros(micros))
		.withBean(JitterSource.class, () -> (() -> this.jitter.next()))
		.withPropertyValues("rate-limit.clients.provider.base-url=" + this.provider.url(),
				"rate-limit.clients.provider.pause-jitter=0");

	@AfterEach
	void stopProvider() {
		this.provider.close();
	}

	@Test
	void retryAfterInSecondsIsWaitedOut() {
		this.provider.then(Answer.of(429, "Retry-After", "7"));
		run((client, context) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.timer.delays()).containsExactly(Duration.ofSeconds(7));
			assertThat(this.provider.seen()).hasSize(2);
		});
	}

	@Test
	void retryAfterAsAnHttpDateIsWaitedOut() {
		String in12Seconds = DateTimeFormatter.RFC_1123_DATE_TIME
			.format(Instant.ofEpochSecond(START_MICROS / 1_000_000L + 12).atOffset(ZoneOffset.UTC));
		this.provider.then(Answer.of(503, "Retry-After", in12Seconds));
		run((client, context) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.timer.delays()).containsExactly(Duration.ofSeconds(12));
			assertThat(this.provider.seen()).hasSize(2);
		});
	}

	@Test
	void backoffWithFullJitterStaysBelowItsDoublingCeilings() {
		this.jitter = () -> 0.999;
		this.provider.then(Answer.of(503), Answer.of(503), Answer.of(429), Answer.of(503));
		run((client, context) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.timer.micros()).containsExactly(99_900L, 199_800L, 299_700L, 299_700L);
		}, "rate-limit.clients.provider.max-attempts=5", "rate-limit.clients.provider.backoff=100ms",
				"rate-limit.clients.provider.max-backoff=300ms");
	}

	@Test
	void theAttemptBoundHolds() {
		this.jitter = () -> 0.5;
		this.provider.otherwise(() -> Answer.of(503));
		run((client, context) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(503);
			assertThat(this.provider.seen()).hasSize(4);
			assertThat(this.timer.delays()).hasSize(3);
		}, "rate-limit.clients.provider.max-attempts=4");
	}

	@Test
	void theDeadlineEndsTheRetriesWithTheProvidersLastAnswer() {
		this.jitter = () -> 0.99;
		this.provider.otherwise(() -> Answer.of(503));
		run((client, context) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(503);
			assertThat(this.provider.seen()).hasSize(3);
			assertThat(this.timer.delays()).containsExactly(Duration.ofMillis(990), Duration.ofMillis(990));
		}, "rate-limit.clients.provider.max-attempts=10", "rate-limit.clients.provider.backoff=1s",
				"rate-limit.clients.provider.max-backoff=1s", "rate-limit.clients.provider.deadline=2500ms");
	}

	@Test
	void aRetryAfterPastTheDeadlineFailsAtOnceAndTheNextCallDoesNotAsk() {
		this.provider.then(Answer.of(429, "Retry-After", "60"));
		run((client, context) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(429);
			assertThat(this.timer.delays()).isEmpty();
			assertThatExceptionOfType(ProviderPausedException.class).isThrownBy(() -> status(client, HttpMethod.GET))
				.satisfies((ex) -> assertThat(ex.getRetryAfterMicros()).isEqualTo(60_000_000L));
			assertThat(this.provider.seen()).hasSize(1);
		}, "rate-limit.clients.provider.deadline=30s");
	}

	@Test
	void aPostIsNotRetriedByDefault() {
		this.provider.then(Answer.of(429, "Retry-After", "1"));
		run((client, context) -> {
			assertThat(status(client, HttpMethod.POST)).isEqualTo(429);
			assertThat(this.provider.seen()).hasSize(1);
			assertThat(this.timer.delays()).isEmpty();
		});
	}

	@Test
	void aPostIsRetriedWhenConfiguredAndItsBodySentAgain() {
		this.provider.then(Answer.of(429, "Retry-After", "1"));
		run((client, context) -> {
			int status = client.post()
				.uri("/v1/complete")
				.bodyValue("{\"prompt\":\"hello\"}")
				.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
				.block(Duration.ofSeconds(10));
			assertThat(status).isEqualTo(200);
			assertThat(this.provider.seen()).extracting(FakeProvider.Seen::method).containsExactly("POST", "POST");
			assertThat(this.timer.delays()).containsExactly(Duration.ofSeconds(1));
		}, "rate-limit.clients.provider.retry-non-idempotent=true");
	}

	@Test
	void anExhaustedQuotaMakesTheNextCallWait() {
		this.provider.then(Answer.of(200, "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "3s"));
		run((client, context) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.timer.delays()).containsExactly(Duration.ofSeconds(3));
		});
	}

	@Test
	void aFailureToConnectIsRetriedAndThenReported() throws Exception {
		String closed;
		try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
			closed = "http://127.0.0.1:" + socket.getLocalPort();
		}
		this.jitter = () -> 0.5;
		run((client, context) -> {
			assertThatExceptionOfType(WebClientRequestException.class).isThrownBy(() -> status(client, HttpMethod.GET));
			assertThat(this.timer.delays()).containsExactly(Duration.ofMillis(100), Duration.ofMillis(200));
		}, "rate-limit.clients.provider.base-url=" + closed);
	}

	@Test
	void everyAttemptTakesTheProvidersRateAndPermit() {
		this.provider.then(Answer.of(503));
		this.jitter = () -> 0.5;
		run((client, context) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(inFlight(context)).isZero();
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> status(client, HttpMethod.GET));
			assertThat(this.provider.seen()).hasSize(2);
		}, limits("capacity=2", "refill=1/1h"));
	}

	@Test
	void thePermitIsHeldUntilTheBodyIsConsumed() {
		run((client, context) -> {
			int held = client.get()
				.uri("/v1/complete")
				.exchangeToMono((response) -> {
					int whileUnread = inFlight(context);
					return response.bodyToMono(String.class).thenReturn(whileUnread);
				})
				.block(Duration.ofSeconds(10));
			assertThat(held).isEqualTo(1);
			assertThat(inFlight(context)).isZero();
			// Released unread, as WebClient does for a body nobody asked for.
			client.get().uri("/v1/complete").retrieve().toBodilessEntity().block(Duration.ofSeconds(10));
			assertThat(inFlight(context)).isZero();
		}, limits("capacity=10", "refill=10/1s"));
	}

	@Test
	void thePermitIsReleasedWhenTheExchangeIsCancelled() {
		CountDownLatch arrived = new CountDownLatch(1);
		CountDownLatch gate = new CountDownLatch(1);
		this.provider.hold(arrived, gate);
		run((client, context) -> {
			Disposable call = client.get().uri("/v1/complete").retrieve().bodyToMono(String.class).subscribe();
			try {
				assertThat(awaited(arrived)).isTrue();
				assertThat(inFlight(context)).isEqualTo(1);
				call.dispose();
				assertThat(inFlight(context)).isZero();
			}
			finally {
				gate.countDown();
			}
			// The cap of 1 was given back: the next call gets its permit.
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(inFlight(context)).isZero();
		}, limits("capacity=10", "refill=10/1s"));
	}

	@Test
	void theLimitersWaitRunsOffTheEventLoop() {
		List<String> waitingThreads = new CopyOnWriteArrayList<>();
		this.limiterSleeper = (micros) -> {
			waitingThreads.add(Thread.currentThread().getName());
			this.sleeper.sleepMicros(micros);
		};
		run((client, context) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			// The bucket of one unit is empty: the second call waits its turn, on a thread that may block.
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(1));
			assertThat(waitingThreads).singleElement().asString().startsWith("boundedElastic");
		}, limits("capacity=1", "refill=1/1s"));
	}

	@Test
	void aPauseIsSharedWithTheRestClientSide() {
		this.provider.then(Answer.of(429, "Retry-After", "30"), Answer.of(429, "Retry-After", "5"));
		run((client, context) -> {
			ProviderClients clients = context.getBean(ProviderClients.class);
			RestClient rest = clients.builder("provider").build();
			// The RestClient is told to stop for 30 s; with one attempt it hands the 429 back.
			assertThat(ProviderClientTests.status(rest, HttpMethod.GET)).isEqualTo(429);
			assertThat(clients.client("provider").isPaused()).isTrue();
			// The WebClient was never told; it waits out the pause before calling, and is told to stop for 5 s.
			assertThat(status(client, HttpMethod.GET)).isEqualTo(429);
			assertThat(this.timer.delays()).containsExactly(Duration.ofSeconds(30));
			// The RestClient waits out the pause the WebClient was told of.
			assertThat(ProviderClientTests.status(rest, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(5));
			assertThat(this.provider.seen()).hasSize(3);
		}, "rate-limit.clients.provider.max-attempts=1", "rate-limit.clients.provider.deadline=1m");
	}

	private String[] limits(String... rate) {
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

	private void run(BiConsumer<WebClient, ApplicationContext> test, String... properties) {
		this.contextRunner.withPropertyValues(properties).run((context) -> {
			assertThat(context).hasNotFailed();
			ProviderWebClients clients = new ProviderWebClients(context.getBean(ProviderClients.class),
					WebClient::builder,
					(client) -> new ProviderExchangeFilter(client, this.timer, Schedulers.boundedElastic()));
			test.accept(clients.builder("provider").build(), context);
		});
	}

	private static boolean awaited(CountDownLatch latch) {
		try {
			return latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	private static int inFlight(ApplicationContext context) {
		return context.getBean(ConcurrencyLimiters.class).inFlight("provider");
	}

	static int status(WebClient client, HttpMethod method) {
		return client.method(method)
			.uri("/v1/complete")
			.exchangeToMono((response) -> response.bodyToMono(String.class)
				.then(Mono.just(response.statusCode().value())))
			.block(Duration.ofSeconds(10));
	}

}

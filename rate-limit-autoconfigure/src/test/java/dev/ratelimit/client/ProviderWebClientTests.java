package dev.ratelimit.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpMethod;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;

import dev.ratelimit.client.FakeProvider.Answer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The provider client's scenarios on its {@code WebClient} filter, and those
 * only a reactive client offers: a permit held until the body is read or the
 * exchange cancelled, the limiter's wait off the event loop, a pause shared
 * with the {@code RestClient} side. Its waits are delays on a
 * {@link RecordingScheduler}, which moves the manual clock instead of waiting;
 * the limiter's waits go to the {@link RecordingSleeper}, as on the blocking
 * side. No test waits for real.
 */
class ProviderWebClientTests extends ProviderClientScenarios<WebClient> {

	private final RecordingScheduler timer = new RecordingScheduler(this.clock);

	@Override
	protected WebClient client(ApplicationContext context) {
		ProviderWebClients clients = new ProviderWebClients(context.getBean(ProviderClients.class), WebClient::builder,
				(client) -> new ProviderExchangeFilter(client, this.timer, Schedulers.boundedElastic()));
		return clients.builder("provider").build();
	}

	@Override
	protected int call(WebClient client, HttpMethod method) {
		return status(client, method);
	}

	@Override
	protected List<Duration> waits() {
		return this.timer.delays();
	}

	@Override
	protected List<Long> waitMicros() {
		return this.timer.micros();
	}

	@Override
	protected Class<? extends Exception> connectionFailure() {
		return WebClientRequestException.class;
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

	private static boolean awaited(CountDownLatch latch) {
		try {
			return latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	static int status(WebClient client, HttpMethod method) {
		return client.method(method)
			.uri("/v1/complete")
			.exchangeToMono((response) -> response.bodyToMono(String.class)
				.then(Mono.just(response.statusCode().value())))
			.block(Duration.ofSeconds(10));
	}

}

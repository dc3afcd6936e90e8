package dev.ratelimit.client;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpMethod;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.client.FakeProvider.Answer;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The provider client against a real HTTP server standing in for the provider,
 * on the in-memory backend. Time is a manual clock that the sleeper moves: no
 * test waits for real.
 */
class ProviderClientTests {

	/** A whole second, so that an HTTP-date (second precision) reads exactly. */
	private static final long START_MICROS = 1_700_000_000_000_000L;

	private final FakeProvider provider = new FakeProvider();

	private final ManualTimeSource clock = new ManualTimeSource(START_MICROS);

	private final RecordingSleeper sleeper = new RecordingSleeper(this.clock, true);

	private JitterSource jitter = JitterSource.random();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withBean(TimeSource.class, () -> this.clock)
		.withBean(Sleeper.class, () -> this.sleeper)
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
		run((client) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(7));
			assertThat(this.provider.seen()).hasSize(2);
		});
	}

	@Test
	void retryAfterAsAnHttpDateIsWaitedOut() {
		String in12Seconds = DateTimeFormatter.RFC_1123_DATE_TIME
			.format(Instant.ofEpochSecond(START_MICROS / 1_000_000L + 12).atOffset(ZoneOffset.UTC));
		this.provider.then(Answer.of(503, "Retry-After", in12Seconds));
		run((client) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(12));
			assertThat(this.provider.seen()).hasSize(2);
		});
	}

	@Test
	void aPauseHoldsForTheNextCallsAndAddsAtMostItsJitter() {
		this.jitter = () -> 0.75;
		this.provider.then(Answer.of(429, "Retry-After", "4"));
		run((client) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(429);
			// The caller that was told: no retry (max-attempts 1); the next call waits 4 s + 0.75 x 2 s.
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofMillis(5_500));
		}, "rate-limit.clients.provider.max-attempts=1", "rate-limit.clients.provider.pause-jitter=2s");
	}

	@Test
	void backoffWithFullJitterStaysBelowItsDoublingCeilings() {
		this.jitter = () -> 0.999;
		this.provider.then(Answer.of(503), Answer.of(503), Answer.of(429), Answer.of(503));
		run((client) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			// Ceilings 100, 200, 300 (capped), 300 ms; each wait just below its ceiling.
			assertThat(this.sleeper.micros()).containsExactly(99_900L, 199_800L, 299_700L, 299_700L);
		}, "rate-limit.clients.provider.max-attempts=5", "rate-limit.clients.provider.backoff=100ms",
				"rate-limit.clients.provider.max-backoff=300ms");
	}

	@Test
	void backoffDrawsItsWaitUniformlyBelowTheCeiling() {
		Random random = new Random(7);
		this.jitter = random::nextDouble;
		this.provider.otherwise(() -> Answer.of(503));
		run((client) -> {
			for (int i = 0; i < 50; i++) {
				assertThat(status(client, HttpMethod.GET)).isEqualTo(503);
			}
			List<Long> sleeps = this.sleeper.micros();
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
	void aHundredCallersRefusedAtTheSameInstantAreSpreadOverTheJitterWindow() throws Exception {
		// Every caller is refused once, at the same moment; each draws its wait once from a seeded source.
		Random random = new Random(42);
		this.jitter = () -> {
			synchronized (random) {
				return random.nextDouble();
			}
		};
		int callers = 100;
		// Holds every refused caller until all are refused, so that all of them are released together.
		CountDownLatch refused = new CountDownLatch(callers);
		RecordingSleeper recording = new RecordingSleeper(this.clock, false);
		Sleeper concurrent = (micros) -> {
			recording.sleepMicros(micros);
			refused.countDown();
			refused.await(30, TimeUnit.SECONDS);
		};
		for (int i = 0; i < callers; i++) {
			this.provider.then(Answer.of(429));
		}
		this.contextRunner.withBean("concurrentSleeper", Sleeper.class, () -> concurrent, (bd) -> bd.setPrimary(true))
			.withPropertyValues("rate-limit.clients.provider.backoff=1s", "rate-limit.clients.provider.max-backoff=1s",
					"rate-limit.clients.provider.max-attempts=2")
			.run((context) -> {
				RestClient client = context.getBean(ProviderClients.class).builder("provider").build();
				CountDownLatch start = new CountDownLatch(1);
				ExecutorService pool = Executors.newFixedThreadPool(callers);
				try {
					List<Future<Integer>> calls = new ArrayList<>();
					for (int i = 0; i < callers; i++) {
						calls.add(pool.submit(() -> {
							start.await();
							return status(client, HttpMethod.GET);
						}));
					}
					start.countDown();
					for (Future<Integer> call : calls) {
						assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo(200);
					}
				}
				finally {
					pool.shutdownNow();
				}
			});
		double window = 1_000_000d;
		double[] waits = recording.micros().stream().mapToDouble((micros) -> micros / window).sorted().toArray();
		assertThat(waits).hasSize(callers);
		Spread spread = Spread.of(waits);
		System.out.println("100 callers released at once, full jitter over a 1 s window: " + spread);
		assertThat(waits[0]).isGreaterThanOrEqualTo(0);
		assertThat(waits[callers - 1]).isLessThan(1);
		// Uniform over [0, 1): standard deviation 1/sqrt(12) = 0.289, quartiles 0.25 / 0.5 / 0.75.
		assertThat(spread.range()).isGreaterThan(0.9);
		assertThat(spread.standardDeviation()).isBetween(0.289 * 0.85, 0.289 * 1.15);
		assertThat(spread.quartiles()).satisfies((q) -> {
			assertThat(q[0]).isBetween(0.15, 0.35);
			assertThat(q[1]).isBetween(0.40, 0.60);
			assertThat(q[2]).isBetween(0.65, 0.85);
		});
		// Kolmogorov-Smirnov distance to the uniform distribution, below its 5% critical value for n = 100.
		assertThat(spread.ksDistance()).isLessThan(1.36 / Math.sqrt(callers));
		// No tenth of the window holds more than a fifth of the callers: no herd.
		assertThat(spread.largestTenthOfTheWindow()).isLessThanOrEqualTo(20);
	}

	@Test
	void theDeadlineEndsTheRetriesWithTheProvidersLastAnswer() {
		this.jitter = () -> 0.99;
		this.provider.otherwise(() -> Answer.of(503));
		run((client) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(503);
			// 0 s, 0.99 s, 1.98 s; a third wait would end at 2.97 s, past the 2.5 s deadline.
			assertThat(this.provider.seen()).hasSize(3);
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofMillis(990), Duration.ofMillis(990));
		}, "rate-limit.clients.provider.max-attempts=10", "rate-limit.clients.provider.backoff=1s",
				"rate-limit.clients.provider.max-backoff=1s", "rate-limit.clients.provider.deadline=2500ms");
	}

	@Test
	void aRetryAfterPastTheDeadlineFailsAtOnceWithTheProvidersAnswer() {
		this.provider.then(Answer.of(429, "Retry-After", "60"));
		run((client) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(429);
			assertThat(this.sleeper.sleeps()).isEmpty();
			assertThat(this.provider.seen()).hasSize(1);
			// The next call does not even ask: the pause outlasts its deadline.
			assertThatExceptionOfType(ProviderPausedException.class).isThrownBy(() -> status(client, HttpMethod.GET))
				.satisfies((ex) -> assertThat(ex.getRetryAfterMicros()).isEqualTo(60_000_000L));
			assertThat(this.provider.seen()).hasSize(1);
		}, "rate-limit.clients.provider.deadline=30s");
	}

	@Test
	void aCallTheProvidersRefusalEndedIsDescribedAsThePauseItLeaves() {
		this.provider.then(Answer.of(429, "Retry-After", "60"));
		this.contextRunner.withPropertyValues("rate-limit.clients.provider.deadline=30s").run((context) -> {
			ProviderClient provider = context.getBean(ProviderClients.class).client("provider");
			assertThat(status(client(context), HttpMethod.GET)).isEqualTo(429);
			// What the application answers its caller with: the provider's pause, as a refused next call would.
			assertThat(provider.refusal()).isInstanceOf(dev.ratelimit.core.RateLimitException.class)
				.satisfies((ex) -> assertThat(ex.getRetryAfterMicros()).isEqualTo(60_000_000L))
				.satisfies((ex) -> assertThat(ex.getClient()).isEqualTo("provider"))
				.hasMessage("Provider 'provider' refused the call; paused for 60000 ms more");
		});
	}

	@Test
	void theAttemptBoundHolds() {
		this.jitter = () -> 0.5;
		this.provider.otherwise(() -> Answer.of(503));
		run((client) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(503);
			assertThat(this.provider.seen()).hasSize(4);
			assertThat(this.sleeper.sleeps()).hasSize(3);
		}, "rate-limit.clients.provider.max-attempts=4");
	}

	@Test
	void aPostIsNotRetriedByDefault() {
		this.provider.then(Answer.of(429, "Retry-After", "1"));
		run((client) -> {
			assertThat(status(client, HttpMethod.POST)).isEqualTo(429);
			assertThat(this.provider.seen()).hasSize(1);
			assertThat(this.sleeper.sleeps()).isEmpty();
		});
	}

	@Test
	void aPostIsRetriedWhenConfigured() {
		this.provider.then(Answer.of(429, "Retry-After", "1"), Answer.of(429, "Retry-After", "1"));
		run((client) -> {
			assertThat(status(client, HttpMethod.POST)).isEqualTo(200);
			assertThat(this.provider.seen()).extracting(FakeProvider.Seen::method).containsExactly("POST", "POST", "POST");
		}, "rate-limit.clients.provider.retry-non-idempotent=true");
		this.sleeper.clear();
		this.provider.then(Answer.of(429, "Retry-After", "1"));
		run((client) -> assertThat(status(client, HttpMethod.POST)).isEqualTo(200),
				"rate-limit.clients.provider.retry-methods=GET,POST");
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(1));
	}

	@Test
	void vendorRemainingRequestsAtZeroMakesTheNextCallWaitForTheReset() {
		this.provider.then(Answer.of(200, "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m0s",
				"x-ratelimit-remaining-tokens", "1200", "x-ratelimit-reset-tokens", "20ms"));
		run((client) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.sleeper.sleeps()).isEmpty();
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofMinutes(1));
			assertThat(this.provider.seen()).hasSize(2);
		}, "rate-limit.clients.provider.deadline=2m");
	}

	@Test
	void anExhaustedIetfQuotaMakesTheNextCallWait() {
		this.provider.then(Answer.of(200, "RateLimit-Policy", "\"day\";q=1000;w=86400, \"burst\";q=10;w=1",
				"RateLimit", "\"day\";r=400;t=3000, \"burst\";r=0;t=3"));
		run((client) -> {
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(3));
		});
	}

	@Test
	void aFailureToConnectIsRetriedAndThenReported() throws Exception {
		String closed;
		try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
			closed = "http://127.0.0.1:" + socket.getLocalPort();
		}
		this.jitter = () -> 0.5;
		run((client) -> {
			assertThatExceptionOfType(ResourceAccessException.class).isThrownBy(() -> status(client, HttpMethod.GET));
			assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofMillis(100), Duration.ofMillis(200));
		}, "rate-limit.clients.provider.base-url=" + closed);
	}

	@Test
	void everyAttemptTakesTheProvidersRateAndPermit() {
		this.provider.then(Answer.of(503));
		this.jitter = () -> 0.5;
		this.contextRunner
			.withPropertyValues("rate-limit.policies.provider-rate.capacity=2",
					"rate-limit.policies.provider-rate.refill=1/1h", "rate-limit.policies.provider-rate.max-wait=1s",
					"rate-limit.concurrency.provider.permits=1", "rate-limit.clients.provider.rate-limit=provider-rate",
					"rate-limit.clients.provider.concurrency=provider")
			.run((context) -> {
				RestClient client = context.getBean(ProviderClients.class).builder("provider").build();
				// Two attempts take the bucket's two units; the permit is given back each time (cap of 1).
				assertThat(status(client, HttpMethod.GET)).isEqualTo(200);
				assertThat(context.getBean(dev.ratelimit.concurrency.ConcurrencyLimiters.class).inFlight("provider"))
					.isZero();
				assertThatExceptionOfType(dev.ratelimit.core.RateLimitExceededException.class)
					.isThrownBy(() -> status(client, HttpMethod.GET));
				assertThat(this.provider.seen()).hasSize(2);
			});
	}

	private void run(Consumer<RestClient> test, String... properties) {
		this.contextRunner.withPropertyValues(properties).run((context) -> {
			assertThat(context).hasNotFailed();
			test.accept(client(context));
		});
	}

	private static RestClient client(ApplicationContext context) {
		return context.getBean(ProviderClients.class).builder("provider").build();
	}

	static int status(RestClient client, HttpMethod method) {
		return client.method(method).uri("/v1/complete").exchange((request, response) -> {
			response.getBody().readAllBytes();
			return response.getStatusCode().value();
		});
	}

	/**
	 * How waits drawn for callers released together spread over the window,
	 * each wait as a fraction of the window.
	 */
	record Spread(double[] sorted) {

		static Spread of(double[] sorted) {
			return new Spread(sorted);
		}

		double range() {
			return this.sorted[this.sorted.length - 1] - this.sorted[0];
		}

		double mean() {
			return Arrays.stream(this.sorted).average().orElse(0);
		}

		double standardDeviation() {
			double mean = mean();
			return Math.sqrt(Arrays.stream(this.sorted).map((x) -> (x - mean) * (x - mean)).sum() / this.sorted.length);
		}

		double[] quartiles() {
			return new double[] { quantile(0.25), quantile(0.5), quantile(0.75) };
		}

		double quantile(double q) {
			return this.sorted[(int) Math.min(this.sorted.length - 1, Math.floor(q * this.sorted.length))];
		}

		double ksDistance() {
			double d = 0;
			int n = this.sorted.length;
			for (int i = 0; i < n; i++) {
				d = Math.max(d, Math.max((i + 1) / (double) n - this.sorted[i], this.sorted[i] - i / (double) n));
			}
			return d;
		}

		int[] tenths() {
			int[] counts = new int[10];
			for (double x : this.sorted) {
				counts[(int) Math.min(9, Math.floor(x * 10))]++;
			}
			return counts;
		}

		int largestTenthOfTheWindow() {
			return Arrays.stream(tenths()).max().orElse(0);
		}

		@Override
		public String toString() {
			double[] q = quartiles();
			return String.format(java.util.Locale.ROOT,
					"min %.3f, max %.3f, mean %.3f, sd %.3f (uniform 0.289), quartiles %.3f / %.3f / %.3f, "
							+ "KS distance %.3f (5%% critical 0.136), callers per tenth of the window %s",
					this.sorted[0], this.sorted[this.sorted.length - 1], mean(), standardDeviation(), q[0], q[1], q[2],
					ksDistance(), Arrays.toString(tenths()));
		}

	}

}

package dev.ratelimit.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpMethod;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

import dev.ratelimit.client.FakeProvider.Answer;
import dev.ratelimit.core.Sleeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The provider client's scenarios on a {@code RestClient}, and those only a
 * blocking client offers: many callers released together, a pause's jitter,
 * the refusal a call leaves. Its waits go to the {@link RecordingSleeper},
 * which moves the manual clock: no test waits for real.
 */
class ProviderClientTests extends ProviderClientScenarios<RestClient> {

	@Override
	protected RestClient client(ApplicationContext context) {
		return context.getBean(ProviderClients.class).builder("provider").build();
	}

	@Override
	protected int call(RestClient client, HttpMethod method) {
		return status(client, method);
	}

	@Override
	protected List<Duration> waits() {
		return this.sleeper.sleeps();
	}

	@Override
	protected List<Long> waitMicros() {
		return this.sleeper.micros();
	}

	@Override
	protected Class<? extends Exception> connectionFailure() {
		return ResourceAccessException.class;
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
	void aPostIsRetriedWhenConfigured() {
		this.provider.then(Answer.of(429, "Retry-After", "1"), Answer.of(429, "Retry-After", "1"));
		run((client, context) -> {
			assertThat(status(client, HttpMethod.POST)).isEqualTo(200);
			assertThat(this.provider.seen()).extracting(FakeProvider.Seen::method).containsExactly("POST", "POST", "POST");
		}, "rate-limit.clients.provider.retry-non-idempotent=true");
		this.sleeper.clear();
		this.provider.then(Answer.of(429, "Retry-After", "1"));
		run((client, context) -> assertThat(status(client, HttpMethod.POST)).isEqualTo(200),
				"rate-limit.clients.provider.retry-methods=GET,POST");
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(1));
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

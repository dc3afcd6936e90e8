package dev.ratelimit.sample;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 32 callers hammer {@code POST /agent/chat} at once, on the real clock: the
 * simulated provider, which counts on its own, never sees more requests in
 * flight than its ceiling nor requests faster than its rate, and no caller
 * gets a 5xx. The tenant limit is raised so that the provider, not the tenant
 * limit, is what the callers compete for.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.policies.tenant-chat.capacity=1000", "rate-limit.policies.tenant-chat.refill=1000/1s",
				"rate-limit.budgets.tenant-daily.amount=1000", "sample.provider.latency=50ms" })
class ProviderHammerTests {

	private static final int CALLERS = 32;

	private static final int CALLS_EACH = 2;

	@LocalServerPort
	int port;

	@Autowired
	SimulatedProvider provider;

	@Test
	void thirtyTwoParallelCallersNeverPushTheProviderPastItsLimitsAndNoneGetsA5xx() throws Exception {
		TestHttp http = TestHttp.on(this.port);
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(CALLERS);
		List<Future<List<Integer>>> callers = new ArrayList<>();
		long began = System.nanoTime();
		try {
			for (int i = 0; i < CALLERS; i++) {
				callers.add(pool.submit(() -> {
					start.await();
					List<Integer> statuses = new ArrayList<>();
					for (int call = 0; call < CALLS_EACH; call++) {
						Answer response = http.postJson("/agent/chat",
								"{\"prompt\":\"hello\",\"maxTokens\":100}", "X-Tenant-Id", "acme");
						statuses.add(response.status());
					}
					return statuses;
				}));
			}
			start.countDown();
			Map<Integer, Integer> byStatus = new TreeMap<>();
			for (Future<List<Integer>> caller : callers) {
				caller.get(60, TimeUnit.SECONDS).forEach((status) -> byStatus.merge(status, 1, Integer::sum));
			}
			long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
			System.out.println(CALLERS + " callers x " + CALLS_EACH + " calls in " + tookMillis + " ms: statuses "
					+ byStatus + "; provider served " + this.provider.served() + ", at most "
					+ this.provider.maxInFlight() + " at once (its ceiling " + SimulatedProvider.PARALLEL
					+ "), refused " + this.provider.refusedForRate() + " for rate and "
					+ this.provider.refusedForParallel() + " for parallelism");

			assertThat(byStatus.keySet()).allMatch((status) -> status < 500);
			assertThat(byStatus.getOrDefault(200, 0)).isEqualTo(CALLERS * CALLS_EACH);
			assertThat(this.provider.served()).isGreaterThanOrEqualTo(CALLERS * CALLS_EACH);
			// The provider's own counts: never past its ceiling, never faster than its bucket allows.
			assertThat(this.provider.maxInFlight()).isLessThanOrEqualTo(SimulatedProvider.PARALLEL);
			assertThat(this.provider.refusedForParallel()).isZero();
			assertThat(this.provider.refusedForRate()).isZero();
		}
		finally {
			pool.shutdownNow();
		}
	}

}

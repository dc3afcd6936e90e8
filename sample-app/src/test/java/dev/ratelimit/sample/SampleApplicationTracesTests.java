package dev.ratelimit.sample;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import dev.ratelimit.support.TestHttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample app as the actuator sets it up, over real HTTP: Spring Boot's own
 * {@code ObservationRegistry}, with the application's observation handlers,
 * observes every request, and the route rule's decision is in the request's
 * observation, which a tracer would make a span of.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@Import({ SampleApplicationHttpTests.ManualClock.class, SampleApplicationTracesTests.Handler.class })
class SampleApplicationTracesTests {

	@LocalServerPort
	int port;

	@Autowired
	Stopped stopped;

	@Test
	void aLimitedRequestsObservationCarriesItsDecision() throws Exception {
		assertThat(TestHttp.on(this.port).get("/api/hello").status()).isEqualTo(200);

		Observation.Context request = await().atMost(Duration.ofSeconds(10))
			.until(() -> this.stopped.contexts.stream()
				.filter((c) -> c.getName().equals("http.server.requests"))
				.findFirst()
				.orElse(null), (found) -> found != null);
		assertThat(value(request, "rate.limit.policy.per-ip.outcome")).isEqualTo("allowed");
		assertThat(value(request, "rate.limit.policy.per-ip.capacity")).isEqualTo("20");
		assertThat(value(request, "rate.limit.policy.per-ip.remaining")).isEqualTo("19");
	}

	private static String value(Observation.Context context, String key) {
		KeyValue value = context.getHighCardinalityKeyValue(key);
		return (value != null) ? value.getValue() : null;
	}

	/** Keeps every observation stopped: an application's handler, added to Boot's registry. */
	static final class Stopped implements ObservationHandler<Observation.Context> {

		final List<Observation.Context> contexts = new CopyOnWriteArrayList<>();

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

		@Override
		public void onStop(Observation.Context context) {
			this.contexts.add(context);
		}

	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Handler {

		@Bean
		Stopped stoppedObservations() {
			return new Stopped();
		}

	}

}

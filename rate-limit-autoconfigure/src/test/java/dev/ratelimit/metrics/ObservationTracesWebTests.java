package dev.ratelimit.metrics;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.ServerHttpObservationFilter;

import dev.ratelimit.support.ManualTimeSource;

import static dev.ratelimit.support.MockRequests.peer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A servlet application with an {@link ObservationRegistry} and Spring's HTTP
 * server observation filter, as the actuator sets them up: every request a
 * route rule limits carries, in its own observation, an event per policy's
 * decision and the policy's outcome, remaining and capacity as key values, for
 * an allowed request as for a refused one; never the caller's key unless asked.
 */
@SpringBootTest(classes = ObservationTracesWebTests.App.class,
		properties = { "rate-limit.policies.search.capacity=2", "rate-limit.policies.search.refill=2/1h",
				"rate-limit.policies.search.key=ip", "rate-limit.policies.global.capacity=100",
				"rate-limit.policies.global.refill=100/1h", "rate-limit.routes[0].pattern=/api/**",
				"rate-limit.routes[0].policies=search,global" })
@AutoConfigureMockMvc
class ObservationTracesWebTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	RecordingObservationHandler handler;

	@Autowired
	ManualTimeSource clock;

	@BeforeEach
	void refillEverything() {
		this.clock.advance(Duration.ofDays(1));
		this.handler.clear();
	}

	@Test
	void allowedAndRefusedRequestsCarryEachPolicysDecisionInTheirObservation() throws Exception {
		this.mvc.perform(get("/api/search").with(peer("192.0.2.1"))).andExpect(status().isOk());
		this.mvc.perform(get("/api/search").with(peer("192.0.2.1"))).andExpect(status().isOk());
		this.mvc.perform(get("/api/search").with(peer("192.0.2.1"))).andExpect(status().isTooManyRequests());

		List<Observation.Context> requests = serverRequests();
		assertThat(requests).hasSize(3);
		Observation.Context first = requests.get(0);
		assertThat(this.handler.events(first, ObservationLimitListener.DECISION_EVENT)).isEmpty();
		assertThat(values(first, "search")).containsExactly("allowed", "1", "2");
		assertThat(values(first, "global")).containsExactly("allowed", "99", "100");

		Observation.Context refused = requests.get(2);
		assertThat(this.handler.events(refused, ObservationLimitListener.DECISION_EVENT))
			.contains("policy search denied, remaining 0 of 2");
		assertThat(values(refused, "search")).containsExactly("denied", "0", "2");
		// The caller's key stays out of traces unless rate-limit.observations.include-key says otherwise.
		assertThat(requests).allSatisfy((request) -> assertThat(request.getHighCardinalityKeyValues()
			.stream()
			.map((keyValue) -> keyValue.getKey())
			.filter((key) -> key.endsWith(".key"))).isEmpty());
	}

	@Test
	void aRequestNoLimitAppliesToCarriesNoDecision() throws Exception {
		this.mvc.perform(get("/open")).andExpect(status().isOk());

		Observation.Context request = serverRequests().get(0);
		assertThat(this.handler.events(request, ObservationLimitListener.DECISION_EVENT)).isEmpty();
		assertThat(request.getHighCardinalityKeyValues().stream().map((keyValue) -> keyValue.getKey()))
			.noneMatch((key) -> key.startsWith("rate.limit."));
	}

	private List<Observation.Context> serverRequests() {
		return this.handler.stopped().stream().filter((c) -> "http.server.requests".equals(c.getName())).toList();
	}

	private static List<String> values(Observation.Context context, String policy) {
		String prefix = "rate.limit.policy." + policy + ".";
		return java.util.stream.Stream.of("outcome", "remaining", "capacity")
			.map((field) -> RecordingObservationHandler.value(context, prefix + field))
			.toList();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(RecordingObservationHandler.Registry.class)
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

		/** Spring's HTTP server observation, first in the chain, as the actuator registers it. */
		@Bean
		FilterRegistrationBean<ServerHttpObservationFilter> serverHttpObservationFilter(ObservationRegistry registry) {
			FilterRegistrationBean<ServerHttpObservationFilter> registration = new FilterRegistrationBean<>(
					new ServerHttpObservationFilter(registry));
			registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 1);
			return registration;
		}

		@Bean
		Endpoints endpoints() {
			return new Endpoints();
		}

	}

	@RestController
	static class Endpoints {

		@GetMapping("/api/search")
		Map<String, String> search() {
			return Map.of("ok", "search");
		}

		@GetMapping("/open")
		Map<String, String> open() {
			return Map.of("ok", "open");
		}

	}

}

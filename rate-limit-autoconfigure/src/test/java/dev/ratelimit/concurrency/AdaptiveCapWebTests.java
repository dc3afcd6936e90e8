package dev.ratelimit.concurrency;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import dev.ratelimit.Concurrency;
import dev.ratelimit.actuate.RateLimitEndpoint;
import dev.ratelimit.support.HeldCalls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Adaptive caps over HTTP (servlet): as a route rule protecting a path and on
 * an annotated method, a shed call is the service's condition (503,
 * {@code temporary-reduced-capacity}, a {@code Retry-After} within the spread,
 * naming no limit, never a 429), a class within its share gets in while the
 * cap is full, and the shed calls are counted by class. The limit stays at 2
 * (AIMD between 1 and 2), critical keeps one of the two.
 */
@SpringBootTest(classes = AdaptiveCapWebTests.App.class, properties = {
		"rate-limit.concurrency.api.adaptive.algorithm=aimd", "rate-limit.concurrency.api.adaptive.initial-limit=2",
		"rate-limit.concurrency.api.adaptive.max-limit=2", "rate-limit.concurrency.api.priority=header('X-Priority')",
		"rate-limit.concurrency.api.shares.critical=50",
		"rate-limit.concurrency.api.exempt.when=header('X-Internal') == 'yes'", "rate-limit.routes[0].pattern=/api/**",
		"rate-limit.routes[0].concurrency=api", "rate-limit.concurrency.jobs.adaptive.algorithm=aimd",
		"rate-limit.concurrency.jobs.adaptive.initial-limit=1", "rate-limit.concurrency.jobs.adaptive.max-limit=1",
		"rate-limit.concurrency.jobs.retry-after=2s", "rate-limit.concurrency.jobs.retry-after-spread=0s",
		"management.endpoints.web.exposure.include=ratelimits", "rate-limit.concurrency.trial.adaptive.algorithm=aimd",
		"rate-limit.concurrency.trial.adaptive.initial-limit=1", "rate-limit.concurrency.trial.adaptive.max-limit=1",
		"rate-limit.concurrency.trial.shadow=true", "rate-limit.routes[1].pattern=/trial/**",
		"rate-limit.routes[1].concurrency=trial" })
@AutoConfigureMockMvc
class AdaptiveCapWebTests {

	private static final String SHED_TYPE = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	@Autowired
	MockMvc mvc;

	@Autowired
	MeterRegistry meters;

	@Autowired
	AdaptiveConcurrencyLimiter adaptive;

	@Autowired
	RateLimitEndpoint endpoint;

	/** The call a test holds in flight, if any. */
	private String heldId;

	@AfterEach
	void letGo() {
		if (this.heldId != null) {
			HeldCalls.release(this.heldId);
		}
	}

	@Test
	void aRouteRuleShedsTheLowestClassWith503AndLetsACriticalCallWithinItsShareIn() throws Exception {
		CompletableFuture<Integer> held = holdInside(get("/api/hold"));
		// One sheddable call in flight, critical's one kept for it: the cap is full for sheddable calls.
		this.mvc.perform(get("/api/quick").header("X-Priority", "sheddable"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Retry-After", org.hamcrest.Matchers.matchesPattern("[1-5]")))
			.andExpect(header().string("Content-Type", org.hamcrest.Matchers.startsWith("application/problem+json")))
			.andExpect(jsonPath("$.type").value(SHED_TYPE))
			.andExpect(jsonPath("$.detail").value(org.hamcrest.Matchers.startsWith("The service is shedding load")))
			.andExpect(jsonPath("$['violated-policies']").doesNotExist());
		this.mvc.perform(get("/api/quick").header("X-Priority", "critical"))
			.andExpect(status().isOk())
			.andExpect(content().string("{\"ok\":\"yes\"}"));
		assertThat(this.meters.counter("rate.limit.concurrency.shed", "policy", "api", "priority", "sheddable",
				"outcome", "shed")
			.count()).isEqualTo(1);
		assertThat(this.meters.get("rate.limit.concurrency.limit").tag("policy", "api").gauge().value()).isEqualTo(2);
		HeldCalls.release(this.heldId);
		assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo(200);
		this.mvc.perform(get("/api/quick").header("X-Priority", "sheddable")).andExpect(status().isOk());
	}

	/**
	 * {@code exempt.*} applies to an adaptive cap as to any limit: an exempt
	 * call takes no permit, so a full cap does not shed it, it is not counted
	 * in flight, and its latency is no sample for the limit.
	 */
	@Test
	void anExemptCallIsNeitherShedNorCountedByAnAdaptiveCap() throws Exception {
		CompletableFuture<Integer> held = holdInside(get("/api/hold"));
		// The cap is full for sheddable calls (a sheddable call is shed here: the first test); an exempt one runs.
		this.mvc.perform(get("/api/quick").header("X-Priority", "sheddable").header("X-Internal", "yes"))
			.andExpect(status().isOk());
		assertThat(this.adaptive.inFlight("api", Priority.SHEDDABLE)).isOne();
		String id = UUID.randomUUID().toString();
		MvcResult exempt = this.mvc.perform(get("/api/deferred").param("id", id).header("X-Internal", "yes"))
			.andExpect(request().asyncStarted())
			.andReturn();
		assertThat(this.adaptive.inFlight("api", Priority.SHEDDABLE)).isOne();
		HeldCalls.release(id);
		this.mvc.perform(asyncDispatch(exempt)).andExpect(status().isOk());
		HeldCalls.release(this.heldId);
		assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo(200);
	}

	@Test
	void theEndpointShowsTheLimitNowAndEachClassInFlight() throws Exception {
		CompletableFuture<Integer> held = holdInside(get("/api/hold").header("X-Priority", "critical"));
		RateLimitEndpoint.AdaptiveDescriptor api = this.endpoint.policies()
			.concurrency()
			.stream()
			.filter((cap) -> cap.name().equals("api"))
			.findFirst()
			.orElseThrow()
			.adaptive();
		assertThat(api.algorithm()).isEqualTo("aimd");
		assertThat(api.limit()).isEqualTo(2);
		assertThat(api.priority()).isEqualTo("header('X-Priority')");
		assertThat(api.shares()).containsEntry("critical", 50).containsEntry("sheddable", 0);
		assertThat(api.inFlight()).containsEntry("critical", 1).containsEntry("normal", 0);
		assertThat(this.endpoint.key("api", "critical")).isInstanceOfSatisfying(
				RateLimitEndpoint.ConcurrencyKeyState.class, (state) -> assertThat(state.inUse()).isOne());
		HeldCalls.release(this.heldId);
		assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo(200);
	}

	@Test
	void anAsynchronousRequestHoldsItsPermitUntilItCompletes() throws Exception {
		String id = UUID.randomUUID().toString();
		MvcResult started = this.mvc.perform(get("/api/deferred").param("id", id).header("X-Priority", "normal"))
			.andExpect(request().asyncStarted())
			.andReturn();
		assertThat(this.adaptive.inFlight("api", Priority.NORMAL)).isOne();
		HeldCalls.release(id);
		this.mvc.perform(asyncDispatch(started)).andExpect(status().isOk());
		assertThat(this.adaptive.inFlight("api", Priority.NORMAL)).isZero();
		assertThat(this.adaptive.limit("api")).hasValue(2);
	}

	@Test
	void aShadowCapLetsThroughWhatItWouldShedAndCountsIt() throws Exception {
		CompletableFuture<Integer> held = holdInside(get("/trial/hold"));
		this.mvc.perform(get("/trial/quick")).andExpect(status().isOk());
		assertThat(this.meters.counter("rate.limit.concurrency.shed", "policy", "trial", "priority", "sheddable",
				"outcome", "shadow")
			.count()).isEqualTo(1);
		assertThat(this.meters.counter("rate.limit.decisions", "kind", "concurrency", "policy", "trial", "outcome",
				"shadow")
			.count()).isEqualTo(1);
		HeldCalls.release(this.heldId);
		assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo(200);
	}

	@Test
	void aServerErrorIsADropThatLowersTheLimit() throws Exception {
		this.mvc.perform(get("/api/fail").header("X-Priority", "critical")).andExpect(status().isInternalServerError());
		// AIMD: 2 × 0.9 rounds down to 1.
		assertThat(this.adaptive.limit("api")).hasValue(1);
		// A success with the cap busy raises it again.
		this.mvc.perform(get("/api/quick").header("X-Priority", "critical")).andExpect(status().isOk());
		assertThat(this.adaptive.limit("api")).hasValue(2);
	}

	@Test
	void anAnnotatedMethodShedsWith503AndTheConfiguredWait() throws Exception {
		CompletableFuture<Integer> held = holdInside(get("/jobs"));
		this.mvc.perform(get("/jobs"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Retry-After", "2"))
			.andExpect(jsonPath("$.type").value(SHED_TYPE));
		HeldCalls.release(this.heldId);
		assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo(200);
		this.mvc.perform(get("/jobs")).andExpect(status().isOk());
	}

	private CompletableFuture<Integer> holdInside(MockHttpServletRequestBuilder request) {
		String id = UUID.randomUUID().toString();
		this.heldId = id;
		return HeldCalls.start(id,
				() -> this.mvc.perform(request.param("id", id)).andReturn().getResponse().getStatus());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Api api() {
			return new Api();
		}

		@Bean
		MeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@RestController
	static class Api {

		@GetMapping({ "/api/hold", "/trial/hold" })
		Map<String, String> hold(@RequestParam(required = false) String id) {
			return held(id);
		}

		@GetMapping("/api/deferred")
		DeferredResult<Map<String, String>> deferred(@RequestParam String id) {
			// Completed when the test releases the call: held in flight until then.
			DeferredResult<Map<String, String>> result = new DeferredResult<>();
			HeldCalls.enter(id).thenAccept((body) -> result.setResult(Map.of("ok", body)));
			return result;
		}

		@GetMapping({ "/api/quick", "/trial/quick" })
		Map<String, String> quick() {
			return Map.of("ok", "yes");
		}

		@GetMapping("/api/fail")
		ResponseEntity<Map<String, String>> fail() {
			return ResponseEntity.internalServerError().body(Map.of("error", "the downstream broke"));
		}

		@Concurrency("jobs")
		@GetMapping("/jobs")
		Map<String, String> jobs(@RequestParam(required = false) String id) {
			return held(id);
		}

		private Map<String, String> held(String id) {
			if (id != null) {
				// Held inside until the test lets go: this is the call in flight, not waiting for time.
				HeldCalls.await(id);
			}
			return Map.of("ok", "yes");
		}

	}

}

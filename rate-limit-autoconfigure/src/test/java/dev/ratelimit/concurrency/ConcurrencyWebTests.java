package dev.ratelimit.concurrency;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import dev.ratelimit.Concurrency;
import dev.ratelimit.support.HeldCalls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code @Concurrency} on controller methods: a second call while the only
 * permit is held is refused (429 by a cap the caller may see; 503 by a shared
 * one, which it may not see), and permits of asynchronous results are released
 * when they complete.
 */
@SpringBootTest(classes = ConcurrencyWebTests.App.class,
		properties = { "rate-limit.concurrency.downstream.permits=1",
				"rate-limit.concurrency.downstream.rejection=service-unavailable" })
@AutoConfigureMockMvc
class ConcurrencyWebTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	LocalConcurrencyLimiter local;

	@Test
	void secondCallWhileThePermitIsHeldIsRefusedWith429() throws Exception {
		String id = UUID.randomUUID().toString();
		CompletableFuture<Integer> first = holdInside("/one", id);
		this.mvc.perform(get("/one"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "1"))
			.andExpect(jsonPath("$['violated-policies'][0]").value("Slow.one.concurrency"));
		HeldCalls.release(id);
		assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(200);
		this.mvc.perform(get("/one")).andExpect(status().isOk());
	}

	@Test
	void sharedDownstreamCapAnswers503() throws Exception {
		String id = UUID.randomUUID().toString();
		CompletableFuture<Integer> first = holdInside("/downstream", id);
		this.mvc.perform(get("/downstream"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(jsonPath("$.type")
				.value("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"));
		HeldCalls.release(id);
		assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(200);
	}

	@Test
	void permitOfADeferredResultIsHeldUntilItCompletes() throws Exception {
		String first = UUID.randomUUID().toString();
		MvcResult started = this.mvc.perform(get("/deferred").param("id", first))
			.andExpect(request().asyncStarted())
			.andReturn();
		this.mvc.perform(get("/deferred").param("id", "refused")).andExpect(status().isServiceUnavailable());
		HeldCalls.release(first);
		this.mvc.perform(asyncDispatch(started)).andExpect(status().isOk());
		String again = UUID.randomUUID().toString();
		this.mvc.perform(get("/deferred").param("id", again)).andExpect(request().asyncStarted());
		HeldCalls.release(again);
	}

	private CompletableFuture<Integer> holdInside(String path, String id) {
		return HeldCalls.start(id,
				() -> this.mvc.perform(get(path).param("id", id)).andReturn().getResponse().getStatus());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Slow slow() {
			return new Slow();
		}

	}

	@RestController
	static class Slow {

		@Concurrency(permits = "1", visibility = "public")
		@GetMapping("/one")
		Map<String, String> one(@RequestParam(required = false) String id) {
			return hold(id);
		}

		@Concurrency("downstream")
		@GetMapping("/downstream")
		Map<String, String> downstream(@RequestParam(required = false) String id) {
			return hold(id);
		}

		@Concurrency(permits = "1")
		@GetMapping("/deferred")
		DeferredResult<Map<String, String>> deferredCall(@RequestParam String id) {
			// Completed when the test releases the call: held in flight until then.
			DeferredResult<Map<String, String>> result = new DeferredResult<>();
			HeldCalls.enter(id).thenAccept((body) -> result.setResult(Map.of("ok", body)));
			return result;
		}

		private Map<String, String> hold(String id) {
			if (id != null) {
				// Held inside until the test lets go: this is the call in flight, not waiting for time.
				HeldCalls.await(id);
			}
			return Map.of("ok", "yes");
		}

	}

}

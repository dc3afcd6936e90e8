package dev.ratelimit.concurrency;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
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
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import dev.ratelimit.Concurrency;

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
	Gate slow;

	@Autowired
	LocalConcurrencyLimiter local;

	@Test
	void secondCallWhileThePermitIsHeldIsRefusedWith429() throws Exception {
		CompletableFuture<Integer> first = holdInside("/one");
		this.mvc.perform(get("/one"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "1"))
			.andExpect(jsonPath("$['violated-policies'][0]").value("Slow.one.concurrency"));
		this.slow.release.countDown();
		assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(200);
		this.mvc.perform(get("/one")).andExpect(status().isOk());
	}

	@Test
	void sharedDownstreamCapAnswers503() throws Exception {
		CompletableFuture<Integer> first = holdInside("/downstream");
		this.mvc.perform(get("/downstream"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(jsonPath("$.type")
				.value("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"));
		this.slow.release.countDown();
		assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(200);
	}

	@Test
	void permitOfADeferredResultIsHeldUntilItCompletes() throws Exception {
		MvcResult started = this.mvc.perform(get("/deferred")).andExpect(request().asyncStarted()).andReturn();
		this.mvc.perform(get("/deferred")).andExpect(status().isServiceUnavailable());
		this.slow.deferred.setResult(Map.of("ok", "done"));
		this.mvc.perform(asyncDispatch(started)).andExpect(status().isOk());
		this.mvc.perform(get("/deferred")).andExpect(request().asyncStarted());
		this.slow.deferred.setResult(Map.of("ok", "again"));
	}

	private CompletableFuture<Integer> holdInside(String path) throws InterruptedException {
		this.slow.entered = new CountDownLatch(1);
		this.slow.release = new CountDownLatch(1);
		CompletableFuture<Integer> call = CompletableFuture.supplyAsync(() -> {
			try {
				return this.mvc.perform(get(path)).andReturn().getResponse().getStatus();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		assertThat(this.slow.entered.await(10, TimeUnit.SECONDS)).isTrue();
		return call;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Gate gate() {
			return new Gate();
		}

		@Bean
		Slow slow(Gate gate) {
			return new Slow(gate);
		}

	}

	/**
	 * Latches shared by the test and the controller; a bean of its own because the
	 * controller is a proxy, whose fields are not the target's.
	 */
	static class Gate {

		volatile CountDownLatch entered = new CountDownLatch(1);

		volatile CountDownLatch release = new CountDownLatch(0);

		volatile DeferredResult<Map<String, String>> deferred;

	}

	@RestController
	static class Slow {

		private final Gate gate;

		Slow(Gate gate) {
			this.gate = gate;
		}

		@Concurrency(permits = "1", visibility = "public")
		@GetMapping("/one")
		Map<String, String> one() throws InterruptedException {
			return hold();
		}

		@Concurrency("downstream")
		@GetMapping("/downstream")
		Map<String, String> downstream() throws InterruptedException {
			return hold();
		}

		@Concurrency(permits = "1")
		@GetMapping("/deferred")
		DeferredResult<Map<String, String>> deferredCall() {
			this.gate.deferred = new DeferredResult<>();
			return this.gate.deferred;
		}

		private Map<String, String> hold() throws InterruptedException {
			this.gate.entered.countDown();
			// Held inside until the test lets go: this is the call in flight, not waiting for time.
			this.gate.release.await(10, TimeUnit.SECONDS);
			return Map.of("ok", "yes");
		}

	}

}

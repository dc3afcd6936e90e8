package dev.ratelimit.aop;

import java.io.IOException;
import java.math.BigDecimal;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockAsyncContext;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Work that ends after the handler returns is finished once, when it really
 * ends, the same for every kind of limit: a budget is settled with the real
 * result (or by its failure rules) and a concurrency permit released, for a
 * {@link DeferredResult}, a {@link Callable}, an {@link SseEmitter} and a
 * {@link StreamingResponseBody}; whether the work completes, fails, times out
 * or its client goes away.
 */
@SpringBootTest(classes = AsyncResultsWebTests.App.class,
		properties = { "rate-limit.budgets.tenant.unit=USD", "rate-limit.budgets.tenant.amount=10.00",
				"rate-limit.budgets.tenant.key=header('X-Tenant-Id')", "rate-limit.concurrency.one.permits=1",
				"rate-limit.concurrency.one.key=header('X-Tenant-Id')" })
@AutoConfigureMockMvc
class AsyncResultsWebTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	Handlers handlers;

	@Autowired
	CostBudgets budgets;

	@Autowired
	LimitRegistry limits;

	@Autowired
	LocalConcurrencyLimiter concurrency;

	private final String tenant = "t-" + UUID.randomUUID();

	@BeforeEach
	void reset() {
		this.handlers.deferred = null;
		this.handlers.emitter = null;
		this.handlers.callableGate = new CountDownLatch(0);
		this.handlers.callableStarted = new CountDownLatch(1);
		this.handlers.callableDone = new CountDownLatch(1);
		this.handlers.callableFails = false;
		this.handlers.callableCalls.set(0);
	}

	@Test
	void deferredResultIsSettledWithItsResultOnceItCompletes() throws Exception {
		MvcResult started = start("/deferred");
		assertHeld(500_000);
		this.handlers.deferred.setResult(Map.of("cost", new BigDecimal("0.12")));
		this.mvc.perform(asyncDispatch(started)).andExpect(status().isOk());
		assertSettled(120_000);
		// Completing again changes nothing.
		this.handlers.deferred.setResult(Map.of("cost", new BigDecimal("0.30")));
		assertSettled(120_000);
	}

	@Test
	void deferredResultThatFailsFollowsTheOnErrorRule() throws Exception {
		MvcResult started = start("/deferred");
		this.handlers.deferred.setErrorResult(new IllegalStateException("provider down"));
		// MockMvc rethrows what no handler resolved: the work's own failure.
		assertThatException().isThrownBy(() -> this.mvc.perform(asyncDispatch(started)))
			.withRootCauseInstanceOf(IllegalStateException.class);
		// The container completes the request after the error response (MockMvc, having thrown, does not).
		complete(started);
		// keep: the estimate is charged, since the provider may have been paid.
		assertSettled(500_000);
	}

	@Test
	void deferredResultWhoseRequestTimesOutIsFinishedAtTheTimeout() throws Exception {
		MvcResult started = start("/deferred");
		timeOut(started);
		assertSettled(500_000);
		// A result arriving after the timeout finishes nothing a second time.
		this.handlers.deferred.setResult(Map.of("cost", new BigDecimal("0.01")));
		assertSettled(500_000);
	}

	@Test
	void deferredResultWhoseClientGoesAwayIsFinished() throws Exception {
		MvcResult started = start("/deferred");
		clientGoesAway(started);
		assertSettled(500_000);
	}

	@Test
	void callableIsSettledWithWhatItReturns() throws Exception {
		MvcResult started = start("/callable");
		this.mvc.perform(asyncDispatch(started)).andExpect(status().isOk());
		assertSettled(70_000);
		assertThat(this.handlers.callableCalls).hasValue(1);
	}

	@Test
	void callableWhoseRequestTimesOutIsFinishedAtTheTimeout() throws Exception {
		this.handlers.callableGate = new CountDownLatch(1);
		try {
			MvcResult started = start("/callable");
			// Running, so that the call really ends after the timeout.
			assertThat(this.handlers.callableStarted.await(10, TimeUnit.SECONDS)).isTrue();
			timeOut(started);
			assertSettled(500_000);
		}
		finally {
			this.handlers.callableGate.countDown();
		}
		// The call that ends afterwards finishes nothing a second time.
		assertThat(this.handlers.callableDone.await(10, TimeUnit.SECONDS)).isTrue();
		assertSettled(500_000);
	}

	@Test
	void callableThatFailsFollowsTheOnErrorRule() throws Exception {
		this.handlers.callableFails = true;
		MvcResult started = start("/callable");
		assertThatException().isThrownBy(() -> this.mvc.perform(asyncDispatch(started)))
			.withRootCauseInstanceOf(IllegalStateException.class);
		complete(started);
		// keep: the estimate is charged, since the provider may have been paid.
		assertSettled(500_000);
	}

	@Test
	void callableWhoseClientGoesAwayIsFinished() throws Exception {
		this.handlers.callableGate = new CountDownLatch(1);
		try {
			MvcResult started = start("/callable");
			assertThat(this.handlers.callableStarted.await(10, TimeUnit.SECONDS)).isTrue();
			clientGoesAway(started);
			assertSettled(500_000);
		}
		finally {
			this.handlers.callableGate.countDown();
		}
		assertThat(this.handlers.callableDone.await(10, TimeUnit.SECONDS)).isTrue();
		assertSettled(500_000);
	}

	@Test
	void sseEmitterIsSettledWhenTheStreamCompletes() throws Exception {
		MvcResult started = start("/sse");
		this.handlers.emitter.send("partial");
		assertHeld(500_000);
		this.handlers.emitter.complete();
		this.mvc.perform(asyncDispatch(started));
		assertSettled(30_000);
	}

	@Test
	void sseEmitterWhoseClientGoesAwayIsFinished() throws Exception {
		MvcResult started = start("/sse");
		clientGoesAway(started);
		assertSettled(500_000);
	}

	@Test
	void sseEmitterThatFailsFollowsTheOnErrorRule() throws Exception {
		MvcResult started = start("/sse");
		this.handlers.emitter.send("partial");
		this.handlers.emitter.completeWithError(new IllegalStateException("provider down"));
		assertThatException().isThrownBy(() -> this.mvc.perform(asyncDispatch(started)))
			.withRootCauseInstanceOf(IllegalStateException.class);
		complete(started);
		// actual is null for a failure, so the on-error rule applies: keep charges the estimate.
		assertSettled(500_000);
		this.handlers.emitter.complete();
		assertSettled(500_000);
	}

	@Test
	void sseEmitterWhoseRequestTimesOutIsFinishedAtTheTimeout() throws Exception {
		MvcResult started = start("/sse");
		timeOut(started);
		assertSettled(500_000);
		this.handlers.emitter.complete();
		assertSettled(500_000);
	}

	@Test
	void streamingBodyIsSettledOnceWritten() throws Exception {
		MvcResult started = start("/streaming");
		this.mvc.perform(asyncDispatch(started)).andExpect(status().isOk());
		assertSettled(20_000);
	}

	private MvcResult start(String path) throws Exception {
		return this.mvc.perform(get(path).header("X-Tenant-Id", this.tenant))
			.andExpect(request().asyncStarted())
			.andReturn();
	}

	/** The reservation and the permit are held while the work runs. */
	private void assertHeld(long reservedMicros) {
		assertThat(state().reservedMicros()).isEqualTo(reservedMicros);
		assertThat(this.concurrency.inUse(this.limits.concurrency().find("one").orElseThrow(), this.tenant))
			.isEqualTo(1);
	}

	/** Settled once: the amount spent, nothing reserved, the permit back. */
	private void assertSettled(long spentMicros) {
		BudgetDecision state = state();
		assertThat(state.spentMicros()).containsExactly(spentMicros);
		assertThat(state.reservedMicros()).isZero();
		assertThat(this.concurrency.inUse(this.limits.concurrency().find("one").orElseThrow(), this.tenant)).isZero();
	}

	private BudgetDecision state() {
		return this.budgets.remaining(this.limits.budgets().find("tenant").orElseThrow(), this.tenant);
	}

	/** What the servlet container does when an async request ends. */
	private static void complete(MvcResult started) throws IOException {
		MockAsyncContext context = (MockAsyncContext) started.getRequest().getAsyncContext();
		for (AsyncListener listener : context.getListeners()) {
			listener.onComplete(new AsyncEvent(context));
		}
	}

	/** What the servlet container does when an async request times out. */
	private static void timeOut(MvcResult started) throws IOException {
		MockAsyncContext context = (MockAsyncContext) started.getRequest().getAsyncContext();
		for (AsyncListener listener : context.getListeners()) {
			listener.onTimeout(new AsyncEvent(context));
		}
		for (AsyncListener listener : context.getListeners()) {
			listener.onComplete(new AsyncEvent(context));
		}
	}

	/** What the servlet container does when the client of an async request goes away. */
	private static void clientGoesAway(MvcResult started) throws IOException {
		MockAsyncContext context = (MockAsyncContext) started.getRequest().getAsyncContext();
		for (AsyncListener listener : context.getListeners()) {
			listener.onError(new AsyncEvent(context, new IOException("Broken pipe")));
		}
		for (AsyncListener listener : context.getListeners()) {
			listener.onComplete(new AsyncEvent(context));
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Handlers handlers() {
			return new Handlers();
		}

		@Bean
		AsyncController asyncController(Handlers handlers) {
			return new AsyncController(handlers);
		}

	}

	/** What the handlers hand out, shared with the test (the controller is a proxy). */
	static class Handlers {

		volatile DeferredResult<Map<String, Object>> deferred;

		volatile SseEmitter emitter;

		volatile CountDownLatch callableGate = new CountDownLatch(0);

		volatile CountDownLatch callableStarted = new CountDownLatch(1);

		volatile CountDownLatch callableDone = new CountDownLatch(1);

		volatile boolean callableFails;

		final AtomicInteger callableCalls = new AtomicInteger();

	}

	@RestController
	static class AsyncController {

		private final Handlers handlers;

		AsyncController(Handlers handlers) {
			this.handlers = handlers;
		}

		@CostBudget(value = "tenant", estimate = "0.50", actual = "#result['cost']")
		@Concurrency("one")
		@GetMapping("/deferred")
		DeferredResult<Map<String, Object>> deferred(@RequestHeader("X-Tenant-Id") String tenant) {
			this.handlers.deferred = new DeferredResult<>();
			return this.handlers.deferred;
		}

		@CostBudget(value = "tenant", estimate = "0.50", actual = "#result['cost']")
		@Concurrency("one")
		@GetMapping("/callable")
		Callable<Map<String, Object>> callable(@RequestHeader("X-Tenant-Id") String tenant) {
			return () -> {
				try {
					this.handlers.callableCalls.incrementAndGet();
					this.handlers.callableStarted.countDown();
					this.handlers.callableGate.await(10, TimeUnit.SECONDS);
					if (this.handlers.callableFails) {
						throw new IllegalStateException("provider down");
					}
					return Map.of("cost", new BigDecimal("0.07"));
				}
				finally {
					this.handlers.callableDone.countDown();
				}
			};
		}

		@CostBudget(value = "tenant", estimate = "0.50", actual = "#exception == null ? 0.03 : null")
		@Concurrency("one")
		@GetMapping("/sse")
		SseEmitter sse(@RequestHeader("X-Tenant-Id") String tenant) {
			this.handlers.emitter = new SseEmitter();
			return this.handlers.emitter;
		}

		@CostBudget(value = "tenant", estimate = "0.50", actual = "0.02")
		@Concurrency("one")
		@GetMapping("/streaming")
		StreamingResponseBody streaming(@RequestHeader("X-Tenant-Id") String tenant) {
			return (out) -> out.write("streamed".getBytes());
		}

	}

}

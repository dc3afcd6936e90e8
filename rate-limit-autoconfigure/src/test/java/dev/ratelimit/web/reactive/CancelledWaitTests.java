package dev.ratelimit.web.reactive;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A WebFlux request waiting for a route cap's permit whose client goes away:
 * the permit granted once it is free goes back at once. On a server without
 * Netty event loops (Tomcat, Jetty, Undertow, a mock exchange) the wait is
 * the stage the request subscribed to; cancelling that stage skipped what
 * holds the permit, which then belonged to no one, and the cap, one permit,
 * refused every later request of the route for good.
 */
@SpringBootTest(classes = CancelledWaitTests.App.class,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.concurrency.waiting.permits=1",
				"rate-limit.concurrency.waiting.max-wait=2s", "rate-limit.routes[0].pattern=/waiting/**",
				"rate-limit.routes[0].concurrency=waiting" })
class CancelledWaitTests {

	@Autowired
	RateLimitWebFilter filter;

	@Test
	void aPermitGrantedToARequestWhoseClientWentAwayGoesBack() {
		Sinks.Empty<Void> holding = Sinks.empty();
		AtomicBoolean holderServed = new AtomicBoolean();
		this.filter.filter(exchange(), (exchange) -> {
			holderServed.set(true);
			return holding.asMono();
		}).subscribe();
		// A cap in wait mode may block: taken off the event loop, so the holder is served a moment later.
		await().atMost(Duration.ofSeconds(10)).untilTrue(holderServed);

		AtomicBoolean waiterServed = new AtomicBoolean();
		Disposable waiter = this.filter.filter(exchange(), (exchange) -> {
			waiterServed.set(true);
			return Mono.empty();
		}).subscribe();
		// The client goes away while the request waits; then the holder ends and the permit is free.
		await().atMost(Duration.ofSeconds(10)).until(CancelledWaitTests::aCallWaitsForAPermit);
		waiter.dispose();
		holding.tryEmitEmpty();

		MockServerWebExchange next = exchange();
		AtomicBoolean nextServed = new AtomicBoolean();
		this.filter.filter(next, (exchange) -> {
			nextServed.set(true);
			return Mono.empty();
		}).block(Duration.ofSeconds(10));
		assertThat(waiterServed).isFalse();
		assertThat(next.getResponse().getStatusCode()).isNotEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(nextServed).as("the permit went back: a later request is served").isTrue();
	}

	/** Whether a thread waits in the local cap for a permit: the waiter, queued before any later request. */
	private static boolean aCallWaitsForAPermit() {
		return Thread.getAllStackTraces().entrySet().stream().anyMatch((thread) -> {
			Thread.State state = thread.getKey().getState();
			return (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) && Arrays
				.stream(thread.getValue())
				.anyMatch((frame) -> frame.getClassName().equals(LocalConcurrencyLimiter.class.getName()));
		});
	}

	private static MockServerWebExchange exchange() {
		return MockServerWebExchange.from(MockServerHttpRequest.get("/waiting/call"));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfigurationWithoutSecurity
	static class App {

	}

}

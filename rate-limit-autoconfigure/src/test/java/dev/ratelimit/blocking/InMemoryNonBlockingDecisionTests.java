package dev.ratelimit.blocking;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link NonBlockingDecisionTests} on the memory backend, whose decisions are
 * taken inline on the event loop.
 */
@SpringBootTest(classes = NonBlockingDecisionTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.per-ip.capacity=3",
				"rate-limit.policies.per-ip.refill=1/1h", "rate-limit.policies.per-ip.key=ip",
				"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-ip" })
class InMemoryNonBlockingDecisionTests extends NonBlockingDecisionTests {

	/**
	 * An annotated method returning {@code Mono} decides in the aspect, on the
	 * event loop that invokes it: inline, without blocking, on this backend. (On
	 * Redis the aspect still calls the store synchronously: issue 28, next step.)
	 */
	@Test
	void anAnnotatedMonoMethodIsDecidedWithoutBlockingAnEventLoop() {
		assertThat(status("/runs")).isEqualTo(200);
		assertThat(status("/runs")).isIn(429, 503);
	}

}

package dev.ratelimit.plans;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * {@link CapPlansTests} on a local cap.
 */
@SpringBootTest(classes = CapPlansTests.App.class,
		properties = { "rate-limit.concurrency.runs.permits=2", "rate-limit.concurrency.runs.key=#key",
				"rate-limit.concurrency.runs.overrides.partner.permits=4" })
class InMemoryCapPlansTests extends CapPlansTests {

}

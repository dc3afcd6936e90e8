package dev.ratelimit.plans;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * {@link PlansWebTests} on the in-memory backend.
 */
@SpringBootTest(classes = PlansWebTests.App.class, properties = "rate-limit.backend=memory")
class InMemoryPlansWebTests extends PlansWebTests {

}

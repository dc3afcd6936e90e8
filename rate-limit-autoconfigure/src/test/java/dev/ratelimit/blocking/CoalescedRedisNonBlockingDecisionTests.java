package dev.ratelimit.blocking;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

import dev.ratelimit.redis.RedisLimiterConnection;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisNonBlockingDecisionTests} with Redis decisions coalesced: a
 * decision that queues behind a call in flight, and the batch sent from the
 * call's completion on Lettuce's event loop, block no event loop either.
 */
@TestPropertySource(properties = "rate-limit.redis.coalescing.enabled=true")
class CoalescedRedisNonBlockingDecisionTests extends RedisNonBlockingDecisionTests {

	@Autowired
	private RedisLimiterConnection connection;

	@Test
	void decisionsAreCoalesced() {
		assertThat(this.connection.coalesces()).isTrue();
	}

}

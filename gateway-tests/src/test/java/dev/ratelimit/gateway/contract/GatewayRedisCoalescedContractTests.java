package dev.ratelimit.gateway.contract;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

import dev.ratelimit.redis.RedisLimiterConnection;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The web contract's scenarios through a Spring Cloud Gateway route and Redis,
 * with decisions coalesced ({@code rate-limit.redis.coalescing.enabled}): the
 * same answers as one call per decision, the failure mode of a frozen Redis
 * included.
 */
@TestPropertySource(properties = "rate-limit.redis.coalescing.enabled=true")
class GatewayRedisCoalescedContractTests extends GatewayRedisContractTests {

	@Autowired
	RedisLimiterConnection connection;

	@Test
	void decisionsCoalesce() {
		assertThat(this.connection.coalesces()).isTrue();
	}

}

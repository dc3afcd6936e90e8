package dev.ratelimit.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The budget timelines of {@link BudgetStoreConformanceTests} with the script
 * sent as {@code EVALSHA}, as it is where Redis refuses functions: both forms
 * of {@code budget.lua} decide alike.
 */
class BudgetStoreEvalShaConformanceTests extends BudgetStoreConformanceTests {

	private static LettuceConnectionFactory plain;

	@BeforeAll
	static void connectPlain() {
		plain = server.newEvalShaConnectionFactory();
	}

	@AfterAll
	static void disconnectPlain() {
		plain.destroy();
	}

	@Override
	RedisConnectionFactory scriptsFactory() {
		return plain;
	}

}

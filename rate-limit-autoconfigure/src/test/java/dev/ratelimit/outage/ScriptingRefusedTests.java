package dev.ratelimit.outage;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.StartupFailures;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis that refuses Lua scripts (an ACL without the scripting commands, as
 * some managed services set up users, or a proxy or server without Lua) can
 * decide no limit: the application does not start, with a message that says
 * why and what to grant, rather than start with every limit on its failure
 * mode for good (fail-open limits silently off).
 */
class ScriptingRefusedTests {

	private final RedisServerFixture redis = RedisServerFixture.start();

	@AfterEach
	void stop() {
		this.redis.close();
	}

	@Test
	void aRedisThatRefusesScriptsStopsTheStartWithWhatToGrant() {
		assertThat(this.redis.call("ACL", "SETUSER", "default", "-@scripting")).isEqualTo("+OK");
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + this.redis.port(),
					"rate-limit.backend=redis", "rate-limit.policies.api.capacity=10",
					"rate-limit.policies.api.refill=10/1s")
			.run((context) -> {
				FailureAnalysis analysis = StartupFailures.analyze(context);
				assertThat(analysis.getDescription()).contains("refuses the rate limiter's Lua scripts", "NOPERM",
						"no limit can be decided on it");
				assertThat(analysis.getAction()).contains("+evalsha +eval +script|load", "rate-limit.backend=memory");
			});
	}

}

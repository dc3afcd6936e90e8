package dev.ratelimit.key;

import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LiveLimit;
import dev.ratelimit.core.RateLimitPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A live limit as applied at one place: a change of the limit reaches the place
 * on its next call, with what the place changes laid over it, and a change the
 * place cannot take leaves it deciding as before.
 */
class AppliedLimitTests {

	private final KeyExpressions expressions = new KeyExpressions(null);

	private final LiveLimit<RateLimitPolicy> live = new LiveLimit<>(LimitDefinition
		.of(RateLimitPolicy.builder("logins").algorithm(Algorithm.FIXED_WINDOW).capacity(5).window("15m").build()));

	@Test
	void aChangeReachesThePlaceWithWhatThePlaceChanges() {
		AppliedLimit<RateLimitPolicy> applied = new AppliedLimit<>(this.live,
				(policy) -> policy.toBuilder(policy.name()).key("#username").build(), null, this.expressions);
		this.live.reconfigure(LimitDefinition.of(
				RateLimitPolicy.builder("logins").algorithm(Algorithm.FIXED_WINDOW).capacity(9).window("15m").build()));
		assertThat(applied.limit().capacity()).isEqualTo(9);
		assertThat(applied.key().getExpressionString()).isEqualTo("#username");
	}

	@Test
	void aPolicyCountedByOutcomeKeepsItsOldFormWhenARefreshMakesItUncountable() {
		AppliedLimit<RateLimitPolicy> applied = new AppliedLimit<>(this.live,
				BoundPolicy.countedByOutcome(UnaryOperator.identity()), null, this.expressions);
		this.live.reconfigure(LimitDefinition.of(RateLimitPolicy.builder("logins")
			.algorithm(Algorithm.LEAKY_BUCKET_SHAPING)
			.capacity(5)
			.refill("5/15m")
			.build()));
		assertThat(applied.limit().algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
		// A later change it can take applies again.
		this.live.reconfigure(LimitDefinition.of(
				RateLimitPolicy.builder("logins").algorithm(Algorithm.FIXED_WINDOW).capacity(3).window("15m").build()));
		assertThat(applied.limit().capacity()).isEqualTo(3);
	}

}

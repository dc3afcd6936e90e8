package dev.ratelimit.aop;

import org.springframework.expression.Expression;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.key.AppliedLimit;

/**
 * A concurrency cap as applied to one annotated method.
 *
 * @param applied the cap as applied here, with the key and max-wait in force at this method
 */
public record BoundCap(AppliedLimit<ConcurrencyPolicy> applied) {

	/** @return the cap as it applies here now, for its name, visibility and rules */
	public ConcurrencyPolicy policy() {
		return this.applied.limit();
	}

	/** @return the key expression in force here */
	public Expression key() {
		return this.applied.key();
	}

}

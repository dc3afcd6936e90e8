package dev.ratelimit.aop;

import org.springframework.expression.Expression;

import dev.ratelimit.concurrency.ConcurrencyPolicy;

/**
 * A concurrency cap as applied to one annotated method, its key parsed.
 *
 * @param policy the cap, with the key and max-wait in force at this method
 * @param key the parsed key expression
 */
public record BoundCap(ConcurrencyPolicy policy, Expression key) {
}

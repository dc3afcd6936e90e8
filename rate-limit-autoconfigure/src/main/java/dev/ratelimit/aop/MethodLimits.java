package dev.ratelimit.aop;

import java.lang.reflect.Method;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.key.BoundPolicy;

/**
 * The limits of one annotated method, resolved once: its rate limits, its
 * budgets and its concurrency cap, applied in that order around each call, and
 * the fallback called when they refuse it.
 *
 * @param method the most specific method, whose parameter names expressions use
 * @param rateLimits the rate-limit policies, in declaration order
 * @param budgets the budgets, in declaration order
 * @param cap the concurrency cap, or {@code null}
 * @param fallback the fallback called instead of throwing a refusal of these limits, or {@code null}
 */
public record MethodLimits(Method method, List<BoundPolicy> rateLimits, List<BoundBudget> budgets,
		@Nullable BoundCap cap, @Nullable FallbackMethod fallback) {

	/** @return whether the method has no limit at all */
	public boolean isEmpty() {
		return this.rateLimits.isEmpty() && this.budgets.isEmpty() && this.cap == null;
	}

}

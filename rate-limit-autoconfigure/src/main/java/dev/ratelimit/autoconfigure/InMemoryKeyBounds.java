package dev.ratelimit.autoconfigure;

import org.springframework.aop.framework.AopInfrastructureBean;

import dev.ratelimit.core.KeyBound;

/**
 * The key bounds of the three in-memory stores, one per kind of limit, so that
 * their sizes, what they dropped and what they decided on overflow slots can be
 * measured. The stores
 * exist whatever the backend: with Redis they are the local fallbacks (and the
 * local concurrency caps).
 *
 * @param rateLimits the in-memory rate-limit backend's bound ({@code rate-limit.memory.max-keys})
 * @param budgets the in-memory budget store's bound ({@code rate-limit.memory.max-budget-keys})
 * @param concurrency the local concurrency caps' bound ({@code rate-limit.memory.max-keys})
 */
public record InMemoryKeyBounds(KeyBound rateLimits, KeyBound budgets, KeyBound concurrency)
		implements AopInfrastructureBean {

	private static final String MAX_KEYS = "rate-limit.memory.max-keys";

	private static final String MAX_BUDGET_KEYS = "rate-limit.memory.max-budget-keys";

	static InMemoryKeyBounds of(RateLimitProperties.Memory memory) {
		// Checked with the other properties, whatever the backend.
		int slots = memory.getOverflowSlots();
		return new InMemoryKeyBounds(new KeyBound(memory.getMaxKeys(), slots, MAX_KEYS),
				new KeyBound(memory.getMaxBudgetKeys(), slots, MAX_BUDGET_KEYS),
				new KeyBound(memory.getMaxKeys(), slots, MAX_KEYS));
	}

}

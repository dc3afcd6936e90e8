package dev.ratelimit.autoconfigure;

import org.springframework.aop.framework.AopInfrastructureBean;

import dev.ratelimit.core.KeyBound;

/**
 * The key bounds of the three in-memory stores, one per kind of limit, so that
 * their sizes and what they dropped and refused can be measured. The stores
 * exist whatever the backend: with Redis they are the local fallbacks (and the
 * local concurrency caps).
 *
 * @param rateLimits the in-memory rate-limit backend's bound ({@code rate-limit.memory.max-keys})
 * @param budgets the in-memory budget store's bound ({@code rate-limit.memory.max-budget-keys})
 * @param concurrency the local concurrency caps' bound ({@code rate-limit.memory.max-keys})
 */
public record InMemoryKeyBounds(KeyBound rateLimits, KeyBound budgets, KeyBound concurrency)
		implements AopInfrastructureBean {

	static InMemoryKeyBounds of(RateLimitProperties.Memory memory) {
		// Checked positive with the other properties, whatever the backend.
		return new InMemoryKeyBounds(new KeyBound(memory.getMaxKeys()), new KeyBound(memory.getMaxBudgetKeys()),
				new KeyBound(memory.getMaxKeys()));
	}

}

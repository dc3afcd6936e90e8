package dev.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.budget.BudgetListener;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.InMemoryBudgetStore;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.core.NamedLimits;

/**
 * Cost budgets: the configured budgets, their store (the one of the chosen
 * backend) and the {@link CostBudgets} API.
 */
@Configuration(proxyBeanMethods = false)
class RateLimitBudgetConfiguration {

	@Bean
	@ConditionalOnMissingBean
	CostBudgets costBudgets(ObjectProvider<BudgetStore> store, LimitKeys keys, TimeSource timeSource,
			InMemoryKeyBounds bounds, ObjectProvider<BudgetListener> listeners) {
		BudgetStore memory = new InMemoryBudgetStore(timeSource, bounds.budgets());
		BudgetStore configured = store.getIfAvailable(() -> memory);
		List<BudgetListener> all = listeners.orderedStream().toList();
		BudgetListener listener = new BudgetListener() {

			@Override
			public void refused(BudgetPolicy policy) {
				all.forEach((each) -> each.refused(policy));
			}

			@Override
			public void settled(BudgetPolicy policy, long actualMicros) {
				all.forEach((each) -> each.settled(policy, actualMicros));
			}

		};
		// A remote store gets an in-memory twin for budgets with failure-mode local.
		return new CostBudgets(configured, (configured == memory) ? null : memory, keys, listener);
	}

}

package dev.ratelimit.autoconfigure;


import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.core.LimitListener;
import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.InMemoryBudgetStore;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.core.NamedLimits;

/**
 * Cost budgets: the configured budgets, their store (the one of the chosen
 * backend) and the {@link CostBudgets} API, when a budget is configured. A
 * budget exists only by configuration ({@code @CostBudget} and the API name
 * configured ones), so without one nothing could use these beans.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnConfigured("rate-limit.budgets")
class RateLimitBudgetConfiguration {

	@Bean
	@ConditionalOnMissingBean
	CostBudgets costBudgets(ObjectProvider<BudgetStore> store, LimitKeys keys, TimeSource timeSource,
			InMemoryKeyBounds bounds, ObjectProvider<LimitListener> listeners) {
		BudgetStore memory = new InMemoryBudgetStore(timeSource, bounds.budgets());
		BudgetStore remote = store.getIfAvailable();
		BudgetStore configured = (remote != null) ? remote : memory;
		// A remote store gets an in-memory twin for budgets with failure-mode local.
		return new CostBudgets(configured, (configured == memory) ? null : memory, keys,
				LimitListener.of(listeners.orderedStream().toList()));
	}

}

package dev.ratelimit.actuate;

import java.util.ArrayList;
import java.util.List;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.beans.factory.SmartInitializingSingleton;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.actuate.PolicyUsages.AnnotatedMethod;
import dev.ratelimit.actuate.PolicyUsages.Kind;
import dev.ratelimit.aop.AnnotatedBeans;
import dev.ratelimit.aop.BoundBudget;
import dev.ratelimit.aop.LimitAnnotations;
import dev.ratelimit.aop.MethodLimits;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.key.BoundPolicy;

/**
 * Fills {@link PolicyUsages} once every singleton exists, with the annotated
 * methods of every bean (the scan the start-up report made, not another walk
 * over the beans) and the policies they use, as the interceptor resolves them
 * (the same resolver, so names, inline policies and key overrides cannot
 * differ from what is enforced). A policy absent from the configured ones is
 * inline.
 * <p>
 * Methods a proxy cannot intercept (private, static, final) are left out: the
 * policy does not apply there, and the start-up report warns about them.
 */
final class PolicyUsageScanner implements SmartInitializingSingleton, AopInfrastructureBean {

	private final AnnotatedBeans beans;

	private final PolicyUsages usages;

	private final LimitRegistry limits;

	private final LimitAnnotations annotations;

	/**
	 * Creates a scanner.
	 * @param beans the limited methods of the beans, as the start-up report sees them
	 * @param usages the registry to fill
	 * @param limits the configured limits
	 * @param annotations the interceptor's resolver of the annotations
	 */
	public PolicyUsageScanner(AnnotatedBeans beans, PolicyUsages usages, LimitRegistry limits,
			LimitAnnotations annotations) {
		this.beans = beans;
		this.usages = usages;
		this.limits = limits;
		this.annotations = annotations;
	}

	@Override
	public void afterSingletonsInstantiated() {
		List<AnnotatedMethod> methods = new ArrayList<>();
		List<RateLimitPolicy> inlineRateLimits = new ArrayList<>();
		List<ConcurrencyPolicy> inlineConcurrency = new ArrayList<>();
		for (AnnotatedBeans.AnnotatedMethod annotated : this.beans.methods()) {
			if (!annotated.interceptable()) {
				// The limit does not apply there; the start-up report warns about it.
				continue;
			}
			String where = annotated.where();
			MethodLimits resolved = this.annotations.resolve(annotated.method(), annotated.beanType());
			for (BoundPolicy bound : resolved.rateLimits()) {
				boolean inline = this.limits.rateLimits().find(bound.policy().name()).isEmpty();
				methods.add(new AnnotatedMethod(Kind.RATE_LIMIT, bound.policy().name(), where, bound.policy().key(),
						inline));
				if (inline) {
					inlineRateLimits.add(bound.policy());
				}
			}
			for (BoundBudget bound : resolved.budgets()) {
				methods.add(new AnnotatedMethod(Kind.BUDGET, bound.policy().name(), where,
						bound.key().getExpressionString(), false));
			}
			if (resolved.cap() != null) {
				ConcurrencyPolicy policy = resolved.cap().policy();
				boolean inline = this.limits.concurrency().find(policy.name()).isEmpty();
				methods.add(new AnnotatedMethod(Kind.CONCURRENCY, policy.name(), where, policy.key(), inline));
				if (inline) {
					inlineConcurrency.add(policy);
				}
			}
		}
		this.usages.setMethods(methods, inlineRateLimits, inlineConcurrency);
	}

}

package dev.ratelimit.aop;

import java.util.ArrayList;
import java.util.List;

import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.reflect.MethodSignature;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.Ordered;
import org.springframework.expression.EvaluationContext;

import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.KeyRequest;
import dev.ratelimit.key.RequestBinding;

/**
 * Enforces {@link dev.ratelimit.RateLimited} on Spring bean methods: evaluates
 * each policy's key and cost, asks the limiter, records the outcome for the
 * response headers, and either proceeds or throws
 * {@link RateLimitExceededException} without running the method.
 */
@Aspect
public class RateLimitAspect implements Ordered {

	private final RateLimitedMethods methods;

	private final KeyExpressions expressions;

	private final RateLimiter limiter;

	private final RequestBinding requests;

	private final int order;

	/**
	 * Creates the aspect.
	 * @param methods resolves annotated methods
	 * @param expressions evaluates keys and costs
	 * @param limiter decides
	 * @param requests the web request binding, {@link RequestBinding#NONE} outside web applications
	 * @param order the aspect's order among other advice; lower runs first
	 */
	public RateLimitAspect(RateLimitedMethods methods, KeyExpressions expressions, RateLimiter limiter,
			RequestBinding requests, int order) {
		this.methods = methods;
		this.expressions = expressions;
		this.limiter = limiter;
		this.requests = requests;
		this.order = order;
	}

	/**
	 * Applies the method's policies around its invocation.
	 * @param joinPoint the invocation
	 * @return the method's result
	 * @throws Throwable whatever the method throws, or {@link RateLimitExceededException}
	 */
	@Around("@annotation(dev.ratelimit.RateLimited) || @annotation(dev.ratelimit.RateLimits)")
	public Object limit(ProceedingJoinPoint joinPoint) throws Throwable {
		MethodSignature signature = (MethodSignature) joinPoint.getSignature();
		Class<?> targetClass = AopUtils.getTargetClass(joinPoint.getTarget());
		LimitedMethod limited = this.methods.resolve(signature.getMethod(), targetClass);
		KeyRequest request = this.requests.current();
		EvaluationContext context = this.expressions.context(request, limited.method(), joinPoint.getArgs());
		List<LimitRequest> calls = new ArrayList<>(limited.policies().size());
		for (BoundPolicy bound : limited.policies()) {
			RateLimitPolicy policy = bound.policy();
			this.requests.applying(policy.name(), policy.visibility(), policy.key(), limited.method());
			calls.add(bound.toRequest(this.expressions, context));
		}
		RateLimitOutcome outcome = this.limiter.acquire(calls);
		this.requests.record(outcome);
		if (!outcome.allowed()) {
			throw new RateLimitExceededException(outcome);
		}
		return joinPoint.proceed();
	}

	@Override
	public int getOrder() {
		return this.order;
	}

}

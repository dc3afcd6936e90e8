package dev.ratelimit.aop;

import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.reflect.MethodSignature;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.Ordered;
import org.springframework.expression.EvaluationContext;

import dev.ratelimit.concurrency.ConcurrencyLimiter;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.RequestBinding;

/**
 * Enforces {@link dev.ratelimit.Concurrency}: takes a permit before the method
 * runs (waiting up to the policy's max-wait), and releases it when the method
 * returns or throws, or when its asynchronous result completes.
 */
@Aspect
public class ConcurrencyAspect implements Ordered {

	private final ConcurrencyMethods methods;

	private final KeyExpressions expressions;

	private final ConcurrencyLimiter limiter;

	private final RequestBinding requests;

	private final int order;

	/**
	 * Creates the aspect.
	 * @param methods resolves annotated methods
	 * @param expressions evaluates keys
	 * @param limiter hands out permits
	 * @param requests the web request binding
	 * @param order the aspect's order; lower runs first
	 */
	public ConcurrencyAspect(ConcurrencyMethods methods, KeyExpressions expressions, ConcurrencyLimiter limiter,
			RequestBinding requests, int order) {
		this.methods = methods;
		this.expressions = expressions;
		this.limiter = limiter;
		this.requests = requests;
		this.order = order;
	}

	/**
	 * Holds a permit around the invocation.
	 * @param joinPoint the invocation
	 * @return the method's result
	 * @throws Throwable what the method throws, or the rejection
	 */
	@Around("@annotation(dev.ratelimit.Concurrency)")
	public Object cap(ProceedingJoinPoint joinPoint) throws Throwable {
		MethodSignature signature = (MethodSignature) joinPoint.getSignature();
		ConcurrencyMethods.CappedMethod capped = this.methods.resolve(signature.getMethod(),
				AopUtils.getTargetClass(joinPoint.getTarget()));
		EvaluationContext context = this.expressions.context(this.requests.current(), capped.method(),
				joinPoint.getArgs());
		this.requests.applying(capped.policy().name(), capped.policy().visibility(), capped.policy().key(),
				capped.method());
		Permit permit = this.limiter.acquire(capped.policy(), this.expressions.key(capped.key(), context));
		Object result;
		try {
			result = joinPoint.proceed();
		}
		catch (Throwable ex) {
			permit.release();
			throw ex;
		}
		return AsyncResults.whenDone(result, permit::release);
	}

	@Override
	public int getOrder() {
		return this.order;
	}

}

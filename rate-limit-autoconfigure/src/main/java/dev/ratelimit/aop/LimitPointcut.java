package dev.ratelimit.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.ClassFilter;
import org.springframework.aop.MethodMatcher;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.StaticMethodMatcher;

/**
 * The methods {@link LimitInterceptor} applies to: those carrying
 * {@code @RateLimited}, {@code @CostBudget} or {@code @Concurrency} (or their
 * containers), directly, as a meta-annotation, or on a method they override or
 * implement, as {@link LimitedMethods} finds them.
 * <p>
 * The auto-proxy creator asks every bean's class: the class filter answers
 * from {@link LimitedMethods}' per-class cache, so a class with no limit
 * annotation anywhere in its hierarchy, nearly every class of an application,
 * is turned down before any of its methods is looked at, and so is a class
 * whose limits its caller enforces ({@link ProxyExemptions}). Static: the
 * answer for a method never depends on the call's arguments.
 */
public final class LimitPointcut extends StaticMethodMatcher implements Pointcut, ClassFilter {

	private final LimitedMethods methods;

	private final ProxyExemptions exemptions;

	/**
	 * Creates the pointcut for every limited method.
	 * @param methods the shared answer of which methods are limited
	 */
	public LimitPointcut(LimitedMethods methods) {
		this(methods, ProxyExemptions.NONE);
	}

	/**
	 * Creates the pointcut.
	 * @param methods the shared answer of which methods are limited
	 * @param exemptions the classes whose limits are enforced without a proxy
	 */
	public LimitPointcut(LimitedMethods methods, ProxyExemptions exemptions) {
		this.methods = methods;
		this.exemptions = exemptions;
	}

	@Override
	public ClassFilter getClassFilter() {
		return this;
	}

	@Override
	public MethodMatcher getMethodMatcher() {
		return this;
	}

	@Override
	public boolean matches(Class<?> type) {
		return this.methods.mayHaveLimitedMethods(type) && !this.exemptions.isExempt(type);
	}

	@Override
	public boolean matches(Method method, @Nullable Class<?> targetClass) {
		return this.methods.isLimited(method, targetClass);
	}

	@Override
	public String toString() {
		return "LimitPointcut: @RateLimited, @CostBudget and @Concurrency methods, meta-annotations and "
				+ "inherited annotations included";
	}

}

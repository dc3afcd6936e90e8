package dev.ratelimit.web.servlet;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.method.HandlerMethod;

import dev.ratelimit.aop.LimitedMethods;
import dev.ratelimit.aop.ProxyExemptions;

/**
 * Which Spring MVC controllers are limited without a proxy: a
 * {@code @Controller} class all of whose limited methods are request handler
 * methods ({@code @RequestMapping}, {@code @GetMapping} and the like) is left
 * unproxied, and {@link LimitedHandlerAdapter} enforces its limits as Spring
 * MVC invokes the handler method, with its resolved arguments. This spares an
 * application the CGLIB proxy of each limited controller, and with it, where
 * nothing else is proxied, Spring's proxy machinery at start-up.
 * <p>
 * A controller with a limited method Spring MVC does not call (one another
 * bean calls) keeps its proxy, which then enforces every limit of the class,
 * its handler methods' too, and the adapter leaves it alone: one rule read by
 * both, so that each limited call is decided exactly once. A Java call of an
 * exempt controller's handler method, not through Spring MVC, is not limited.
 * Answers are cached per class.
 */
public final class LimitedControllers implements ProxyExemptions, AopInfrastructureBean {

	private final LimitedMethods methods;

	private final Map<Class<?>, Boolean> exempt = new ConcurrentHashMap<>();

	/**
	 * Creates the rule.
	 * @param methods which methods are limited
	 */
	public LimitedControllers(LimitedMethods methods) {
		this.methods = methods;
	}

	@Override
	public boolean isExempt(Class<?> type) {
		Boolean known = this.exempt.get(type);
		if (known == null) {
			// Two threads may both work it out: the answer is the same, and a plain put spares a lambda.
			known = onlyHandlersLimited(type);
			this.exempt.put(type, known);
		}
		return known;
	}

	/**
	 * Returns whether the adapter limits a handler method's call: its class
	 * is exempt from the proxy and the method is limited.
	 * @param handler the handler method Spring MVC is about to invoke
	 * @return whether its limits are the adapter's to enforce
	 */
	public boolean enforces(HandlerMethod handler) {
		Class<?> type = handler.getBeanType();
		return this.methods.mayHaveLimitedMethods(type) && isExempt(type)
				&& this.methods.isLimited(handler.getMethod(), type);
	}

	private boolean onlyHandlersLimited(Class<?> type) {
		if (!AnnotatedElementUtils.hasAnnotation(type, Controller.class) || !this.methods.mayHaveLimitedMethods(type)) {
			return false;
		}
		// Each signature once, as the class declares it or inherits it last: a handler mapping on an override counts.
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type)) {
			if (isCandidate(method) && this.methods.isLimited(method, type)
					&& !AnnotatedElementUtils.hasAnnotation(method, RequestMapping.class)) {
				return false;
			}
		}
		return true;
	}

	/** A method a caller could reach on the bean, the ones a proxy would advise. */
	private static boolean isCandidate(Method method) {
		return !method.isBridge() && !method.isSynthetic() && !Modifier.isStatic(method.getModifiers())
				&& method.getDeclaringClass() != Object.class;
	}

}

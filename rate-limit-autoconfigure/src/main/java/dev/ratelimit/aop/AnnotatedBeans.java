package dev.ratelimit.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.RateLimits;

/**
 * Finds the limited methods of every bean of an application, for the start-up
 * report and the {@code ratelimits} endpoint: one walk over the beans, so both
 * see the same methods.
 */
public final class AnnotatedBeans {

	private static final Log logger = LogFactory.getLog(AnnotatedBeans.class);

	private AnnotatedBeans() {
	}

	/**
	 * Visits every method of every bean class carrying a limit annotation,
	 * directly or as a meta-annotation; each class once, however many beans it
	 * backs.
	 * @param beanFactory the bean factory
	 * @param visitor what to do with each method
	 */
	public static void forEachLimitedMethod(ConfigurableListableBeanFactory beanFactory, Visitor visitor) {
		Set<Class<?>> seen = new HashSet<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = typeOf(beanFactory, name);
			if (type == null || !seen.add(ClassUtils.getUserClass(type)) || !isCandidate(type)) {
				continue;
			}
			Class<?> userClass = ClassUtils.getUserClass(type);
			ReflectionUtils.doWithMethods(userClass, (method) -> {
				if (LimitAnnotations.isAnnotated(method)) {
					visitor.visit(type, userClass.getName() + "#" + method.getName(), method,
							isInterceptable(method));
				}
			}, (method) -> !method.isBridge() && !method.isSynthetic());
		}
	}

	private static Class<?> typeOf(ConfigurableListableBeanFactory beanFactory, String beanName) {
		try {
			return beanFactory.getType(beanName, false);
		}
		catch (RuntimeException ex) {
			// A bean whose type cannot be predicted has no annotations we could read either.
			logger.debug("Cannot determine the type of bean '" + beanName + "'", ex);
			return null;
		}
	}

	private static boolean isCandidate(Class<?> type) {
		return AnnotationUtils.isCandidateClass(type, RateLimited.class)
				|| AnnotationUtils.isCandidateClass(type, RateLimits.class)
				|| AnnotationUtils.isCandidateClass(type, CostBudget.class)
				|| AnnotationUtils.isCandidateClass(type, Concurrency.class);
	}

	/** Whether a class proxy can advise the method: package-private and protected ones included. */
	private static boolean isInterceptable(Method method) {
		int modifiers = method.getModifiers();
		return !Modifier.isPrivate(modifiers) && !Modifier.isStatic(modifiers) && !Modifier.isFinal(modifiers);
	}

	/**
	 * What to do with a limited method.
	 */
	@FunctionalInterface
	public interface Visitor {

		/**
		 * Visits a limited method.
		 * @param beanType the bean's type, as the proxy sees it
		 * @param where {@code fully.qualified.Class#method}
		 * @param method the method
		 * @param interceptable whether a Spring proxy can intercept it (not private,
		 * static or final); when not, its limits do not apply
		 */
		void visit(Class<?> beanType, String where, Method method, boolean interceptable);

	}

}

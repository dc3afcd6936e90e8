package dev.ratelimit.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The limited methods of every bean of an application, for the start-up report
 * and the {@code ratelimits} endpoint: one walk over the beans, made the first
 * time they are asked for (once every singleton exists) and kept, so both see
 * the same methods and neither walks the beans again.
 * <p>
 * Which classes carry limits is {@link LimitedMethods}' answer, the one the
 * pointcut gave when the beans were proxied: a class without a limit
 * annotation in its hierarchy is passed over with a map lookup, and only the
 * methods of the others are looked at.
 */
public final class AnnotatedBeans implements AopInfrastructureBean {

	private static final Log logger = LogFactory.getLog(AnnotatedBeans.class);

	private final ConfigurableListableBeanFactory beanFactory;

	private final LimitedMethods limitedMethods;

	private final ProxyExemptions exemptions;

	/**
	 * Taken by the first callers while one of them scans. A lock, not a monitor:
	 * the scan asks the bean factory (which has locks of its own) and may log,
	 * and a virtual thread that parks inside a monitor pins its carrier on JDK
	 * 21 to 23.
	 */
	private final ReentrantLock scanning = new ReentrantLock();

	private volatile @Nullable List<AnnotatedMethod> methods;

	/**
	 * Creates the scan of a bean factory's beans.
	 * @param beanFactory the bean factory
	 * @param limitedMethods which methods are limited
	 */
	public AnnotatedBeans(ConfigurableListableBeanFactory beanFactory, LimitedMethods limitedMethods) {
		this(beanFactory, limitedMethods, ProxyExemptions.NONE);
	}

	/**
	 * Creates the scan of a bean factory's beans.
	 * @param beanFactory the bean factory
	 * @param limitedMethods which methods are limited
	 * @param exemptions the classes whose limits are enforced without a proxy (any of their methods
	 * is then interceptable)
	 */
	public AnnotatedBeans(ConfigurableListableBeanFactory beanFactory, LimitedMethods limitedMethods,
			ProxyExemptions exemptions) {
		this.beanFactory = beanFactory;
		this.limitedMethods = limitedMethods;
		this.exemptions = exemptions;
	}

	/**
	 * Returns every method of every bean class carrying a limit annotation,
	 * directly or as a meta-annotation; each class once, however many beans it
	 * backs. Scanned on the first call, which should come once every singleton
	 * exists (the types of beans are final then).
	 * @return the methods, in bean definition order
	 */
	public List<AnnotatedMethod> methods() {
		List<AnnotatedMethod> found = this.methods;
		if (found == null) {
			this.scanning.lock();
			try {
				found = this.methods;
				if (found == null) {
					found = scan();
					this.methods = found;
				}
			}
			finally {
				this.scanning.unlock();
			}
		}
		return found;
	}

	private List<AnnotatedMethod> scan() {
		List<AnnotatedMethod> found = new ArrayList<>();
		Set<Class<?>> seen = new HashSet<>();
		for (String name : this.beanFactory.getBeanDefinitionNames()) {
			Class<?> type = typeOf(name);
			if (type == null) {
				continue;
			}
			Class<?> userClass = ClassUtils.getUserClass(type);
			if (!seen.add(userClass) || !this.limitedMethods.mayHaveLimitedMethods(userClass)) {
				continue;
			}
			boolean exempt = this.exemptions.isExempt(userClass);
			ReflectionUtils.doWithMethods(userClass, (method) -> {
				if (this.limitedMethods.isAnnotated(method)) {
					found.add(new AnnotatedMethod(userClass, userClass.getName() + "#" + method.getName(), method,
							isInterceptable(method) || (exempt && !Modifier.isStatic(method.getModifiers()))));
				}
			}, (method) -> !method.isBridge() && !method.isSynthetic());
		}
		return List.copyOf(found);
	}

	/**
	 * The class whose methods are called: for a singleton behind an AOP proxy,
	 * its target's (a JDK proxy's class has only the interfaces' methods, all
	 * final, and would hide those of the target); else the bean's type.
	 */
	private @Nullable Class<?> typeOf(String beanName) {
		try {
			Object singleton = this.beanFactory.containsSingleton(beanName) ? this.beanFactory.getSingleton(beanName)
					: null;
			if (singleton != null && !(singleton instanceof FactoryBean) && AopUtils.isAopProxy(singleton)) {
				return AopProxyUtils.ultimateTargetClass(singleton);
			}
			return this.beanFactory.getType(beanName, false);
		}
		catch (RuntimeException ex) {
			// A bean whose type cannot be predicted has no annotations we could read either.
			logger.debug("Cannot determine the type of bean '" + beanName + "'", ex);
			return null;
		}
	}

	/** Whether a class proxy can advise the method: package-private and protected ones included. */
	private static boolean isInterceptable(Method method) {
		int modifiers = method.getModifiers();
		return !Modifier.isPrivate(modifiers) && !Modifier.isStatic(modifiers) && !Modifier.isFinal(modifiers);
	}

	/**
	 * A limited method of a bean class.
	 *
	 * @param beanType the bean's class (a proxy's user class)
	 * @param where {@code fully.qualified.Class#method}
	 * @param method the method
	 * @param interceptable whether its limits can apply: a Spring proxy can intercept it (not
	 * private, static or final), or its class is exempt from the proxy and it is not static (every
	 * other limited method of such a controller is a handler method Spring MVC calls through the
	 * starter's adapter); when not, its limits do not apply
	 */
	public record AnnotatedMethod(Class<?> beanType, String where, Method method, boolean interceptable) {
	}

}

package dev.ratelimit.aop;

import java.lang.annotation.Annotation;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.RateLimits;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pointcut matches exactly what the union of Spring's
 * {@code AnnotationMatchingPointcut}s (one per annotation and container,
 * {@code checkInherited}) matched before it: the same classes, the same
 * methods, for every kind of placement (direct, meta, meta-meta, repeated,
 * on an interface, a superclass, a generic interface, a default method) and
 * for plain classes, CGLIB proxies and JDK proxies.
 */
class LimitPointcutTests {

	/** What the advisor used before: checkInherited covers meta-annotations, interfaces and superclasses. */
	private static final Pointcut BEFORE = new ComposablePointcut(annotated(RateLimited.class))
		.union(annotated(RateLimits.class))
		.union(annotated(CostBudget.class))
		.union(annotated(CostBudget.List.class))
		.union(annotated(Concurrency.class));

	private static Pointcut annotated(Class<? extends Annotation> type) {
		return new AnnotationMatchingPointcut(null, type, true);
	}

	@Test
	void matchesTheSameClassesAndMethodsAsTheAnnotationMatchingPointcuts() {
		LimitPointcut pointcut = new LimitPointcut(new LimitedMethods());
		int limitedClasses = 0;
		int limitedMethods = 0;
		for (Class<?> type : catalogue()) {
			boolean before = AopUtils.canApply(BEFORE, type);
			assertThat(AopUtils.canApply(pointcut, type)).as("applies to %s", type).isEqualTo(before);
			limitedClasses += before ? 1 : 0;
			for (Method method : methodsOf(type)) {
				boolean matched = BEFORE.getMethodMatcher().matches(method, type);
				assertThat(pointcut.getClassFilter().matches(type) && pointcut.getMethodMatcher().matches(method, type))
					.as("%s called on %s", method, type)
					.isEqualTo(matched);
				limitedMethods += matched ? 1 : 0;
			}
		}
		// The catalogue exercises both answers.
		assertThat(limitedClasses).isGreaterThan(15);
		assertThat(limitedMethods).isGreaterThan(25);
	}

	@Test
	void turnsDownAClassWithoutLimitsBeforeLookingAtItsMethods() {
		LimitPointcut pointcut = new LimitPointcut(new LimitedMethods());
		assertThat(pointcut.getClassFilter().matches(Plain.class)).isFalse();
		assertThat(pointcut.getClassFilter().matches(String.class)).isFalse();
		assertThat(pointcut.getClassFilter().matches(Direct.class)).isTrue();
		assertThat(pointcut.getClassFilter().matches(ImplementsAnnotatedInterface.class)).isTrue();
		assertThat(pointcut.getMethodMatcher().isRuntime()).isFalse();
	}

	@Test
	void findsTheAnnotatedMethodsTheScanReports() {
		LimitedMethods methods = new LimitedMethods();
		assertThat(methods.isAnnotated(method(Direct.class, "limited"))).isTrue();
		assertThat(methods.isAnnotated(method(Direct.class, "plain"))).isFalse();
		assertThat(methods.isAnnotated(method(MetaMeta.class, "limited"))).isTrue();
		// Declared on the interface: the implementation's method carries it by inheritance.
		assertThat(methods.isAnnotated(method(ImplementsAnnotatedInterface.class, "limited"))).isTrue();
		assertThat(methods.isAnnotated(method(ImplementsAnnotatedInterface.class, "plain"))).isFalse();
	}

	private static Method method(Class<?> type, String name) {
		return ReflectionUtils.findMethod(type, name);
	}

	/** Every method the auto-proxy creator or a proxy may ask about: the class's own, inherited, and its interfaces'. */
	private static List<Method> methodsOf(Class<?> type) {
		Set<Method> methods = new LinkedHashSet<>(List.of(ReflectionUtils.getAllDeclaredMethods(type)));
		for (Class<?> implemented : ClassUtils.getAllInterfacesForClassAsSet(type)) {
			methods.addAll(List.of(implemented.getMethods()));
		}
		return new ArrayList<>(methods);
	}

	private static List<Class<?>> catalogue() {
		List<Class<?>> types = new ArrayList<>(List.of(Plain.class, OtherAnnotationsOnly.class, Direct.class,
				EachKind.class, Repeated.class, ExplicitContainers.class, Meta.class, MetaMeta.class,
				MetaContainer.class, AnnotatedInterface.class, ImplementsAnnotatedInterface.class,
				AnnotatedSuperclass.class, OverridesWithoutAnnotation.class, InheritsUnchanged.class,
				GenericAnnotatedInterface.class, ImplementsGenericInterface.class, AnnotatedDefaultMethod.class,
				UsesDefaultMethod.class, AnnotatedOnImplementationOnly.class, HiddenOrSealed.class,
				AbstractAnnotated.class, String.class, Object.class, Runnable.class));
		// CGLIB proxies (a class-based proxy's class) and JDK proxies (an interface-based one's).
		for (Supplier<Object> target : List.<Supplier<Object>>of(Direct::new, ImplementsAnnotatedInterface::new,
				OverridesWithoutAnnotation::new, ImplementsGenericInterface::new, AnnotatedOnImplementationOnly::new,
				Plain::new)) {
			types.add(proxy(target.get(), true).getClass());
			types.add(proxy(target.get(), false).getClass());
		}
		return types;
	}

	private static Object proxy(Object target, boolean proxyTargetClass) {
		ProxyFactory factory = new ProxyFactory(target);
		factory.setProxyTargetClass(proxyTargetClass);
		if (!proxyTargetClass && factory.getProxiedInterfaces().length == 0) {
			factory.addInterface(Runnable.class);
		}
		return factory.getProxy();
	}

	@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@interface Unrelated {

	}

	@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@RateLimited("meta")
	@interface PerUser {

	}

	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@PerUser
	@interface PerUserAgain {

	}

	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@RateLimits({ @RateLimited("a"), @RateLimited("b") })
	@interface TwoLimits {

	}

	static class Plain {

		public void work() {
		}

	}

	static class OtherAnnotationsOnly {

		@Unrelated
		@Deprecated
		public void work() {
		}

	}

	static class Direct implements Runnable {

		@RateLimited("direct")
		public void limited() {
		}

		public void plain() {
		}

		@Override
		public void run() {
		}

	}

	static class EachKind {

		@RateLimited("rate")
		public void rate() {
		}

		@CostBudget(value = "spend", estimate = "1")
		public void budget() {
		}

		@Concurrency(permits = "1")
		public void capped() {
		}

	}

	static class Repeated {

		@RateLimited("a")
		@RateLimited("b")
		public void twice() {
		}

		@CostBudget(value = "a", estimate = "1")
		@CostBudget(value = "b", estimate = "1")
		public void twoBudgets() {
		}

	}

	static class ExplicitContainers {

		@RateLimits({ @RateLimited("a") })
		public void rates() {
		}

		@CostBudget.List({ @CostBudget(value = "a", estimate = "1") })
		public void budgets() {
		}

	}

	static class Meta {

		@PerUser
		public void limited() {
		}

		@Unrelated
		public void plain() {
		}

	}

	static class MetaMeta {

		@PerUserAgain
		public void limited() {
		}

	}

	static class MetaContainer {

		@TwoLimits
		public void limited() {
		}

	}

	interface AnnotatedInterface {

		@RateLimited("interface")
		void limited();

		void plain();

	}

	static class ImplementsAnnotatedInterface implements AnnotatedInterface {

		@Override
		public void limited() {
		}

		@Override
		public void plain() {
		}

	}

	static class AnnotatedSuperclass {

		@Concurrency(permits = "1")
		public void limited() {
		}

		public void plain() {
		}

	}

	static class OverridesWithoutAnnotation extends AnnotatedSuperclass implements Runnable {

		@Override
		public void limited() {
		}

		@Override
		public void run() {
		}

	}

	static class InheritsUnchanged extends AnnotatedSuperclass {

	}

	interface GenericAnnotatedInterface<T> {

		@CostBudget(value = "generic", estimate = "1")
		T call(T argument);

	}

	static class ImplementsGenericInterface implements GenericAnnotatedInterface<String> {

		@Override
		public String call(String argument) {
			return argument;
		}

	}

	interface AnnotatedDefaultMethod {

		@RateLimited("default")
		default void limited() {
		}

	}

	static class UsesDefaultMethod implements AnnotatedDefaultMethod {

	}

	interface PlainInterface extends Callable<String> {

		void limited();

	}

	static class AnnotatedOnImplementationOnly implements PlainInterface {

		@Override
		@RateLimited("implementation")
		public void limited() {
		}

		@Override
		public String call() {
			return "";
		}

	}

	static class HiddenOrSealed {

		@RateLimited("hidden")
		private void hidden() {
		}

		@RateLimited("sealed")
		public final void sealed() {
		}

	}

	abstract static class AbstractAnnotated {

		@RateLimited("abstract")
		public abstract void limited();

	}

}

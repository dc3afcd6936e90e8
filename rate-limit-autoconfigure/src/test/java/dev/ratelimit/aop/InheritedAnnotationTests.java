package dev.ratelimit.aop;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.aop.framework.autoproxy.InfrastructureAdvisorAutoProxyCreator;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.RateLimited;
import dev.ratelimit.RateLimits;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.core.RateLimitExceededException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Limits declared away from the method called still apply, with every kind of
 * proxy and either auto-proxy creator: on the interface a bean implements, on
 * the implementation of an interface method called through the interface, on
 * a superclass method the bean overrides, and in a {@code @RateLimits}
 * container, written out or carried by a meta-annotation. And the scan the
 * start-up report and the endpoint share finds each of them once.
 */
class InheritedAnnotationTests {

	/** Each method keys its limits by its own name, so that each has buckets of its own. */
	private static final String[] POLICIES = { "rate-limit.policies.once.capacity=1",
			"rate-limit.policies.once.refill=1/1h", "rate-limit.policies.twice.capacity=2",
			"rate-limit.policies.twice.refill=2/1h" };

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withUserConfiguration(Services.class)
		.withPropertyValues(POLICIES);

	/**
	 * {@code cglib} and {@code jdk}: AspectJ's auto-proxy creator (the weaver is on
	 * the class path) with class or interface proxies; {@code infrastructure}:
	 * Spring's infrastructure advisor auto-proxy creator, the one Spring Boot
	 * registers without AspectJ.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "cglib", "jdk", "infrastructure" })
	void limitsDeclaredAwayFromTheCalledMethodApply(String proxies) {
		runner(proxies).run((context) -> {
			assertThat(context).hasNotFailed();
			Annotated annotated = context.getBean(Annotated.class);
			assertThat(AopUtils.isJdkDynamicProxy(annotated)).isEqualTo(proxies.equals("jdk"));
			assertLimitedOnce(annotated::onInterface, "once");
			assertLimitedOnce(annotated::onImplementation, "once");
			// Two policies in one container: the smaller one refuses the second call.
			assertLimitedOnce(annotated::container, "once");
			assertLimitedOnce(annotated::metaContainer, "once");
			annotated.plain();
			annotated.plain();
			Overriding overriding = context.getBean(Overriding.class);
			assertLimitedOnce(overriding::work, "once");
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "cglib", "jdk", "infrastructure" })
	void theScanFindsEachLimitedMethodOnceAndKeepsWhatItFound(String proxies) {
		runner(proxies).run((context) -> {
			AnnotatedBeans beans = context.getBean(AnnotatedBeans.class);
			List<AnnotatedBeans.AnnotatedMethod> methods = beans.methods();
			assertThat(methods).extracting(AnnotatedBeans.AnnotatedMethod::where)
				.containsExactlyInAnyOrder(AnnotatedService.class.getName() + "#onInterface",
						AnnotatedService.class.getName() + "#onImplementation",
						AnnotatedService.class.getName() + "#container",
						AnnotatedService.class.getName() + "#metaContainer",
						// The override and the superclass method it overrides, as the scan always listed them.
						Overriding.class.getName() + "#work", Overriding.class.getName() + "#work");
			assertThat(methods).allSatisfy((method) -> assertThat(method.interceptable()).isTrue());
			// Kept, not walked again for the next reader.
			assertThat(beans.methods()).isSameAs(methods);
		});
	}

	private ApplicationContextRunner runner(String proxies) {
		return switch (proxies) {
			case "cglib" -> this.contextRunner;
			case "jdk" -> this.contextRunner.withPropertyValues("spring.aop.proxy-target-class=false");
			case "infrastructure" -> new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
				.withUserConfiguration(InfrastructureProxies.class, Services.class)
				.withPropertyValues(POLICIES);
			default -> throw new IllegalArgumentException(proxies);
		};
	}

	private static void assertLimitedOnce(Runnable call, String policy) {
		call.run();
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(call::run)
			.satisfies((ex) -> assertThat(ex.getViolatedPolicies()).containsExactly(policy));
	}

	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@RateLimits({ @RateLimited(value = "twice", key = "'meta'"), @RateLimited(value = "once", key = "'meta'") })
	@interface OnceAndTwice {

	}

	interface Annotated {

		@RateLimited(value = "once", key = "'onInterface'")
		void onInterface();

		void onImplementation();

		void container();

		void metaContainer();

		void plain();

	}

	static class AnnotatedService implements Annotated {

		@Override
		public void onInterface() {
		}

		@Override
		@RateLimited(value = "once", key = "'onImplementation'")
		public void onImplementation() {
		}

		@Override
		@RateLimits({ @RateLimited(value = "twice", key = "'container'"),
				@RateLimited(value = "once", key = "'container'") })
		public void container() {
		}

		@Override
		@OnceAndTwice
		public void metaContainer() {
		}

		@Override
		public void plain() {
		}

	}

	static class Base {

		@RateLimited(value = "once", key = "'base'")
		public void work() {
		}

	}

	static class Overriding extends Base {

		@Override
		public void work() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class InfrastructureProxies {

		@Bean
		static InfrastructureAdvisorAutoProxyCreator autoProxyCreator() {
			InfrastructureAdvisorAutoProxyCreator creator = new InfrastructureAdvisorAutoProxyCreator();
			creator.setProxyTargetClass(true);
			return creator;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Services {

		@Bean
		AnnotatedService annotatedService() {
			return new AnnotatedService();
		}

		@Bean
		Overriding overriding() {
			return new Overriding();
		}

	}

}

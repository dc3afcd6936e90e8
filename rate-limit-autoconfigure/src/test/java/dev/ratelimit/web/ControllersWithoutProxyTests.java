package dev.ratelimit.web;

import java.util.concurrent.atomic.AtomicInteger;

import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;

import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.RootClassFilter;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcRegistrations;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

import dev.ratelimit.RateLimited;
import dev.ratelimit.aop.AnnotatedBeans;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.autoconfigure.RateLimitWebMvcAutoConfiguration;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.web.servlet.LimitedControllers;
import dev.ratelimit.web.servlet.LimitedHandlerAdapter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Limited controllers without a CGLIB proxy: Spring MVC's handler adapter
 * enforces their limits, with keys read from the resolved arguments, each
 * request decided exactly once whether or not something else proxies the
 * controller; a controller with a limited method Spring MVC does not call
 * keeps its proxy; and wherever the starter's adapter is not the one in use
 * (its own property, the application's {@code WebMvcRegistrations} or
 * {@code @EnableWebMvc}) the controllers are proxied and limited as before,
 * or the start-up stops, never unlimited.
 */
class ControllersWithoutProxyTests {

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, DispatcherServletAutoConfiguration.class,
				WebMvcAutoConfiguration.class, HttpMessageConvertersAutoConfiguration.class))
		.withUserConfiguration(Controllers.class);

	@Test
	void limitedHandlerMethodsAreEnforcedWithoutAProxy() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(AopUtils.isAopProxy(context.getBean(Greetings.class))).isFalse();
			assertThat(context.getBean(RequestMappingHandlerAdapter.class)).isInstanceOf(LimitedHandlerAdapter.class);
			assertGreetingLimitedOncePerRequest(context);
			// The start-up report still warns of a static limited method neither Spring MVC nor a proxy calls.
			assertThat(context.getBean(AnnotatedBeans.class).methods())
				.filteredOn((method) -> method.beanType() == Greetings.class)
				.extracting((method) -> method.method().getName() + "=" + method.interceptable())
				.containsExactlyInAnyOrder("greet=true", "busy=true", "tally=false");
		});
	}

	@Test
	void aDirectCallOfAControllerWithoutAProxyIsNotLimited() {
		this.contextRunner.run((context) -> {
			Greetings greetings = context.getBean(Greetings.class);
			for (int i = 0; i < 3; i++) {
				assertThat(greetings.greet("a")).isEqualTo("hi a");
			}
		});
	}

	@Test
	void aControllerWithALimitedMethodSpringMvcDoesNotCallKeepsItsProxyAndCountsEachRequestOnce() {
		this.contextRunner.run((context) -> {
			Mixed mixed = context.getBean(Mixed.class);
			assertThat(AopUtils.isAopProxy(mixed)).isTrue();
			MockMvc mvc = mvc(context);
			mvc.perform(get("/mixed").param("user", "a")).andExpect(status().isOk());
			mvc.perform(get("/mixed").param("user", "a")).andExpect(status().isOk());
			mvc.perform(get("/mixed").param("user", "a")).andExpect(status().isTooManyRequests());
			mixed.helper();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(mixed::helper);
		});
	}

	@Test
	void aControllerProxiedForOtherAdviceIsCountedOnceAndRefusedBeforeThatAdvice() {
		this.contextRunner.withUserConfiguration(OtherAdvice.class).run((context) -> {
			assertThat(AopUtils.isAopProxy(context.getBean(Greetings.class))).isTrue();
			assertGreetingLimitedOncePerRequest(context);
			// The refused request never entered the other advice.
			assertThat(context.getBean(OtherAdvice.class).calls).hasValue(3);
			MockMvc mvc = mvc(context);
			mvc.perform(get("/busy")).andExpect(content().string("served"));
			mvc.perform(get("/busy")).andExpect(content().string("later"));
			// The fallback is called on the bean itself, outside the other advice, as behind the starter's proxy.
			assertThat(context.getBean(OtherAdvice.class).calls).hasValue(4);
		});
	}

	@Test
	void controllerProxiesWhenAskedForLimitDirectCallsToo() {
		this.contextRunner.withPropertyValues("rate-limit.web.controller-proxies=true").run((context) -> {
			assertThat(context).doesNotHaveBean(LimitedControllers.class);
			assertThat(context.getBean(RequestMappingHandlerAdapter.class))
				.isNotInstanceOf(LimitedHandlerAdapter.class);
			Greetings greetings = context.getBean(Greetings.class);
			assertThat(AopUtils.isAopProxy(greetings)).isTrue();
			assertGreetingLimitedOncePerRequest(context);
			greetings.greet("c");
			greetings.greet("c");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greetings.greet("c"));
		});
	}

	@Test
	void anApplicationsOwnWebMvcRegistrationsKeepsItsAdapterAndTheProxies() {
		this.contextRunner.withUserConfiguration(OwnRegistrations.class).run((context) -> {
			assertThat(context).doesNotHaveBean(LimitedControllers.class);
			assertThat(context.getBean(RequestMappingHandlerAdapter.class)).isInstanceOf(OwnAdapter.class);
			assertThat(AopUtils.isAopProxy(context.getBean(Greetings.class))).isTrue();
			assertGreetingLimitedOncePerRequest(context);
		});
	}

	@Test
	void enableWebMvcKeepsItsAdapterAndTheProxies() {
		this.contextRunner.withUserConfiguration(OwnMvc.class).run((context) -> {
			assertThat(context).doesNotHaveBean(LimitedControllers.class);
			assertThat(context.getBean(RequestMappingHandlerAdapter.class))
				.isNotInstanceOf(LimitedHandlerAdapter.class);
			assertThat(AopUtils.isAopProxy(context.getBean(Greetings.class))).isTrue();
			assertGreetingLimitedOncePerRequest(context);
		});
	}

	@Test
	void anotherAdapterBesideTheStartersStopsTheStartUpRatherThanLeaveControllersUnlimited() {
		this.contextRunner.withUserConfiguration(ExtraAdapter.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageContaining(Greetings.class.getName() + "#greet")
				.hasMessageContaining("through a " + RequestMappingHandlerAdapter.class.getName())
				.hasMessageContaining("would not be limited");
			assertThat(((RateLimitConfigurationException) context.getStartupFailure()).getAction())
				.contains("rate-limit.web.controller-proxies=true");
		});
	}

	@Test
	void anAdapterServingOtherHandlersOnlyLeavesTheStartersInCharge() {
		// As Spring Data REST's adapter does: first in order, but only for its own controllers.
		this.contextRunner.withUserConfiguration(NarrowAdapter.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(AopUtils.isAopProxy(context.getBean(Greetings.class))).isFalse();
			assertGreetingLimitedOncePerRequest(context);
		});
	}

	/** Two requests of a user pass, the third is refused, another user still passes: one decision per request. */
	private static void assertGreetingLimitedOncePerRequest(AssertableWebApplicationContext context) throws Exception {
		MockMvc mvc = mvc(context);
		mvc.perform(get("/greet").param("user", "a")).andExpect(status().isOk()).andExpect(content().string("hi a"));
		mvc.perform(get("/greet").param("user", "a")).andExpect(status().isOk());
		mvc.perform(get("/greet").param("user", "a")).andExpect(status().isTooManyRequests());
		mvc.perform(get("/greet").param("user", "b")).andExpect(status().isOk());
	}

	private static MockMvc mvc(AssertableWebApplicationContext context) {
		return MockMvcBuilders.webAppContextSetup(context).build();
	}

	@Configuration(proxyBeanMethods = false)
	static class Controllers {

		@Bean
		Greetings greetings() {
			return new Greetings();
		}

		@Bean
		Mixed mixed() {
			return new Mixed();
		}

	}

	@RestController
	static class Greetings {

		@RateLimited(policy = "greet", capacity = "2", refill = "2/1h", key = "#user")
		@GetMapping("/greet")
		public String greet(@RequestParam("user") String user) {
			return "hi " + user;
		}

		@RateLimited(policy = "busy", capacity = "1", refill = "1/1h", fallback = "later")
		@GetMapping("/busy")
		public String busy() {
			return "served";
		}

		public String later() {
			return "later";
		}

		@RateLimited(policy = "tally", capacity = "1", refill = "1/1h")
		static int tally() {
			return 0;
		}

	}

	/** A controller one of whose limited methods is called by other beans, not by Spring MVC. */
	@RestController
	static class Mixed {

		@RateLimited(policy = "mixed", capacity = "2", refill = "2/1h", key = "#user")
		@GetMapping("/mixed")
		public String mixed(@RequestParam("user") String user) {
			return "mixed " + user;
		}

		@RateLimited(policy = "helper", capacity = "1", refill = "1/1h")
		public String helper() {
			return "helped";
		}

	}

	/** Advice of the application's own on the controller: it proxies the bean whatever the starter does. */
	@Configuration(proxyBeanMethods = false)
	static class OtherAdvice {

		final AtomicInteger calls = new AtomicInteger();

		@Bean
		Advisor countingAdvisor() {
			MethodInterceptor counting = (invocation) -> {
				this.calls.incrementAndGet();
				return invocation.proceed();
			};
			// Every method of Greetings: its handler methods and the fallback alike.
			return new DefaultPointcutAdvisor(new ComposablePointcut(new RootClassFilter(Greetings.class)), counting);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnRegistrations {

		@Bean
		WebMvcRegistrations ownRegistrations() {
			return new WebMvcRegistrations() {

				@Override
				public RequestMappingHandlerAdapter getRequestMappingHandlerAdapter() {
					return new OwnAdapter();
				}

			};
		}

	}

	static class OwnAdapter extends RequestMappingHandlerAdapter {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebMvc
	static class OwnMvc {

	}

	@Configuration(proxyBeanMethods = false)
	static class NarrowAdapter {

		@Bean
		RequestMappingHandlerAdapter narrowAdapter() {
			RequestMappingHandlerAdapter adapter = new RequestMappingHandlerAdapter() {

				@Override
				protected boolean supportsInternal(HandlerMethod handlerMethod) {
					return handlerMethod.getBeanType() == OwnMvc.class;
				}

			};
			adapter.setOrder(Ordered.HIGHEST_PRECEDENCE);
			return adapter;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ExtraAdapter {

		@Bean
		RequestMappingHandlerAdapter extraAdapter() {
			return new RequestMappingHandlerAdapter();
		}

	}

}

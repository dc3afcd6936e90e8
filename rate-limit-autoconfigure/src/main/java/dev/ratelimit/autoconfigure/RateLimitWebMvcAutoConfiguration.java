package dev.ratelimit.autoconfigure;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.webmvc.autoconfigure.WebMvcRegistrations;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurationSupport;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

import dev.ratelimit.aop.LimitInterceptor;
import dev.ratelimit.aop.LimitedMethods;
import dev.ratelimit.web.servlet.LimitedControllers;
import dev.ratelimit.web.servlet.LimitedHandlerAdapter;
import dev.ratelimit.web.servlet.LimitedHandlerAdapterCheck;

/**
 * Limited Spring MVC controllers without a proxy: Spring Boot's
 * {@link RequestMappingHandlerAdapter} replaced, through
 * {@link WebMvcRegistrations}, by the {@link LimitedHandlerAdapter}, which
 * enforces the limits of the controllers {@link LimitedControllers} exempts
 * from the proxy as it invokes their handler methods.
 * <p>
 * Only where Spring Boot configures Spring MVC and nothing else registers an
 * adapter: an application with {@code @EnableWebMvc} (its own
 * {@code WebMvcConfigurationSupport}) or its own {@code WebMvcRegistrations}
 * keeps its adapter, and its controllers are proxied as any other limited
 * bean; so does one with {@code rate-limit.web.controller-proxies=true}.
 * Ordered before Spring Boot's {@code WebMvcAutoConfiguration}, so that the
 * conditions see only the application's own Spring MVC configuration.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration")
@ConditionalOnProperty(prefix = "rate-limit", name = "enabled", havingValue = "true", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ RequestMappingHandlerAdapter.class, WebMvcRegistrations.class })
@ConditionalOnBooleanProperty(name = "rate-limit.web.controller-proxies", havingValue = false, matchIfMissing = true)
@ConditionalOnMissingBean({ WebMvcConfigurationSupport.class, WebMvcRegistrations.class })
public class RateLimitWebMvcAutoConfiguration {

	/** Read by the pointcut when the auto-proxy creator starts, before any controller exists. */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static LimitedControllers rateLimitLimitedControllers(LimitedMethods limitedMethods) {
		return new LimitedControllers(limitedMethods);
	}

	@Bean
	WebMvcRegistrations rateLimitWebMvcRegistrations(LimitedControllers controllers,
			ObjectProvider<LimitInterceptor> interceptor) {
		LimitedHandlerAdapter adapter = new LimitedHandlerAdapter(controllers,
				RateLimitAnnotationConfiguration.lazyAdvice(interceptor));
		return new WebMvcRegistrations() {

			@Override
			public RequestMappingHandlerAdapter getRequestMappingHandlerAdapter() {
				return adapter;
			}

		};
	}

	@Bean
	LimitedHandlerAdapterCheck rateLimitHandlerAdapterCheck(ListableBeanFactory beanFactory,
			LimitedControllers controllers) {
		return new LimitedHandlerAdapterCheck(beanFactory, controllers);
	}

}

package dev.ratelimit.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.webflux.autoconfigure.WebFluxRegistrations;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.config.WebFluxConfigurationSupport;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;

import dev.ratelimit.aop.LimitInterceptor;
import dev.ratelimit.key.RequestBinding;
import dev.ratelimit.web.reactive.RequestBoundHandlerAdapter;
import dev.ratelimit.web.reactive.RequestBoundHandlerAdapter.Binding;

/**
 * Limited WebFlux handler methods that return a plain value, limited per
 * caller: Spring Boot's {@link RequestMappingHandlerAdapter} replaced, through
 * {@link WebFluxRegistrations}, by the {@link RequestBoundHandlerAdapter},
 * which calls them with their request in reach.
 * <p>
 * Only where Spring Boot configures WebFlux and nothing else registers an
 * adapter: an application with {@code @EnableWebFlux} (its own
 * {@code WebFluxConfigurationSupport}) or its own {@code WebFluxRegistrations}
 * keeps its adapter, and the start-up report names the limited handler methods
 * whose keys then find no request. Ordered before Spring Boot's
 * {@code WebFluxAutoConfiguration}, so that the conditions see only the
 * application's own WebFlux configuration.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration")
@ConditionalOnProperty(prefix = "rate-limit", name = "enabled", havingValue = "true", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ RequestMappingHandlerAdapter.class, WebFluxRegistrations.class })
@ConditionalOnMissingBean({ WebFluxConfigurationSupport.class, WebFluxRegistrations.class })
public class RateLimitWebFluxAutoConfiguration {

	@Bean
	WebFluxRegistrations rateLimitWebFluxRegistrations(ObjectProvider<LimitInterceptor> interceptor,
			ObjectProvider<RequestBinding> binding) {
		RequestBoundHandlerAdapter adapter = new RequestBoundHandlerAdapter((method, beanType) -> {
			LimitInterceptor limits = interceptor.getIfAvailable();
			RequestBinding requests = binding.getIfAvailable(() -> RequestBinding.NONE);
			Boolean mayBlock = (limits != null) ? limits.mayBlock(method, beanType) : null;
			if (mayBlock == null || requests.defers(method)) {
				// Not limited, or decided in the pipeline, reading the request from its context.
				return Binding.NONE;
			}
			return mayBlock ? Binding.OFF_LOOP : Binding.ON_LOOP;
		});
		return new WebFluxRegistrations() {

			@Override
			public RequestMappingHandlerAdapter getRequestMappingHandlerAdapter() {
				return adapter;
			}

		};
	}

}

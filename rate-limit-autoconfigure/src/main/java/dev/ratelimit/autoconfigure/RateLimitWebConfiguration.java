package dev.ratelimit.autoconfigure;

import java.util.Objects;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;

import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.RequestBinding;
import dev.ratelimit.web.servlet.ProblemResponses;
import dev.ratelimit.web.servlet.RateLimitExceptionResolver;
import dev.ratelimit.web.servlet.RateLimitFilter;
import dev.ratelimit.web.RateLimitHeaders;
import dev.ratelimit.web.servlet.RejectionHandler;
import dev.ratelimit.web.servlet.Rejections;
import dev.ratelimit.web.RouteLimits;
import dev.ratelimit.web.RouteRules;
import dev.ratelimit.web.servlet.RouteRuleVerifier;
import dev.ratelimit.web.servlet.ServletRequestBinding;
import dev.ratelimit.web.WebContract;

/**
 * Servlet integration: the route filter (when {@code rate-limit.routes} has
 * rules), the request binding of annotated methods, and the answer to
 * refusals, written by the one {@link RejectionHandler} for route rules and
 * for the exceptions thrown inside Spring MVC alike. The header fields are
 * the {@link RateLimitWebContractConfiguration}'s.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
class RateLimitWebConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RejectionHandler rateLimitRejectionHandler() {
		return new ProblemResponses();
	}

	@Bean
	@ConditionalOnMissingBean
	Rejections rateLimitRejections(RejectionHandler handler, RateLimitProperties properties) {
		return new Rejections(handler, properties.getUnavailableRetryAfter());
	}

	@Bean
	@ConditionalOnMissingBean
	RequestBinding rateLimitRequestBinding(WebContract contract) {
		return new ServletRequestBinding(contract);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "rate-limit.web.exception-resolver.enabled", matchIfMissing = true)
	RateLimitExceptionResolver rateLimitExceptionResolver(Rejections rejections) {
		return new RateLimitExceptionResolver(rejections);
	}

	/**
	 * The route filter, with route rules only: an application limiting methods
	 * alone has no filter in its chain.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnConfigured("rate-limit.routes")
	static class Routes {

		@Bean
		RouteRuleVerifier rateLimitRouteRuleVerifier(
				@Qualifier("rateLimitFilterRegistration") FilterRegistrationBean<RateLimitFilter> registration,
				ObjectProvider<RequestMappingInfoHandlerMapping> mappings) {
			RateLimitFilter filter = Objects.requireNonNull(registration.getFilter(), "the registration has its filter");
			return new RouteRuleVerifier(filter.getRoutes(), mappings.orderedStream().toList());
		}

		/** Where the actuator's endpoints are, for the caps to leave them out. */
		@Bean
		ManagementPaths rateLimitManagementPaths(Environment environment, RateLimitProperties properties) {
			return ManagementPaths.of(environment, properties, true);
		}

		@Bean
		@ConditionalOnMissingBean(name = "rateLimitFilterRegistration")
		FilterRegistrationBean<RateLimitFilter> rateLimitFilterRegistration(RateLimitProperties properties,
				LimitRegistry limits, KeyExpressions expressions, RouteLimits routeLimits, ClientIpResolver ipResolver,
				Rejections rejections, ManagementPaths management) {
			RouteRules rules = new RouteRules(RouteRulesBinder.bind(properties, limits, expressions),
					management.uncapped());
			RateLimitFilter filter = new RateLimitFilter(rules, routeLimits, ipResolver, rejections);
			FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
			registration.setName("rateLimitFilter");
			registration.setDispatcherTypes(RateLimitFilter.dispatcherTypes());
			registration.setOrder(properties.getFilter().getOrder());
			return registration;
		}

	}

}

package dev.ratelimit.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;

import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.RequestBinding;
import dev.ratelimit.web.RateLimitHeaders;
import dev.ratelimit.web.reactive.RateLimitWebFilter;
import dev.ratelimit.web.reactive.ReactiveRejections;
import dev.ratelimit.web.reactive.ReactiveRequestBinding;
import dev.ratelimit.web.reactive.ReactiveRouteLimits;
import dev.ratelimit.web.reactive.RequestBoundHandlerAdapter;
import dev.ratelimit.web.RouteLimits;
import dev.ratelimit.web.RouteRules;
import dev.ratelimit.web.reactive.ReactorDecisionThreads;
import dev.ratelimit.web.Refusals;
import dev.ratelimit.web.reactive.RequestObservations;
import dev.ratelimit.web.WebContract;

/**
 * WebFlux integration: the answer to refusals (a {@link ReactiveRejections}
 * exception handler, so that a refusal is a 429 or 503 and never a 500), the
 * request binding that defers annotated reactive methods into their
 * pipeline, and the route filter when {@code rate-limit.routes} has rules;
 * the same contract as the servlet integration, whose header fields are the
 * {@link RateLimitWebContractConfiguration}'s.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(DispatcherHandler.class)
class RateLimitReactiveWebConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ReactiveRejections rateLimitReactiveRejections(RateLimitProperties properties) {
		return new ReactiveRejections(new Refusals(properties.getUnavailableRetryAfter()));
	}

	@Bean
	@ConditionalOnMissingBean
	RequestBinding rateLimitRequestBinding(WebContract contract, DecisionThreads threads,
			ObjectProvider<RequestMappingHandlerAdapter> adapters) {
		// Asked once, at start-up, for the report: whether WebFlux calls plain handler methods with their request.
		return new ReactiveRequestBinding(contract, threads,
				() -> adapters.orderedStream().anyMatch((adapter) -> adapter instanceof RequestBoundHandlerAdapter));
	}

	/** Where reactive decisions run what cannot run inline, and wait: Reactor's schedulers and timer. */
	@Bean
	@ConditionalOnMissingBean
	DecisionThreads rateLimitDecisionThreads() {
		return ReactorDecisionThreads.INSTANCE;
	}

	/** What a route's policies do to a request: for the route rules, and for a gateway's routes. */
	@Bean
	@ConditionalOnMissingBean
	ReactiveRouteLimits rateLimitReactiveRouteLimits(RouteLimits routeLimits, ClientIpResolver ipResolver,
			ReactiveRejections rejections, DecisionThreads threads, ObjectProvider<RequestObservations> observations) {
		return new ReactiveRouteLimits(routeLimits, ipResolver, rejections, threads, observations.getIfAvailable());
	}

	/**
	 * The route filter, with route rules only.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnConfigured("rate-limit.routes")
	static class Routes {

		/** Where the actuator's endpoints are, for the caps to leave them out. */
		@Bean
		ManagementPaths rateLimitManagementPaths(Environment environment, RateLimitProperties properties) {
			return ManagementPaths.of(environment, properties, false);
		}

		@Bean
		@ConditionalOnMissingBean
		RateLimitWebFilter rateLimitWebFilter(RateLimitProperties properties, LimitRegistry limits,
				KeyExpressions expressions, ReactiveRouteLimits routeLimits, ManagementPaths management) {
			RouteRules rules = new RouteRules(RouteRulesBinder.bind(properties, limits, expressions),
					management.uncapped());
			return new RateLimitWebFilter(rules, routeLimits, properties.getFilter().getOrder());
		}

	}

	/**
	 * Puts each request's exchange in the Reactor context, where the limited
	 * methods' calls read it, when no route filter does (it does so itself,
	 * sparing every request a filter).
	 */
	@Configuration(proxyBeanMethods = false)
	@Conditional(NoRouteRules.class)
	@ConditionalOnMissingBean(ServerWebExchangeContextFilter.class)
	static class ExchangeContext {

		@Bean
		ServerWebExchangeContextFilter rateLimitExchangeContextFilter() {
			return new ServerWebExchangeContextFilter();
		}

	}

	/** Matches when there are no route rules, and so no route filter. */
	static class NoRouteRules extends NoneNestedConditions {

		NoRouteRules() {
			super(ConfigurationPhase.PARSE_CONFIGURATION);
		}

		@ConditionalOnConfigured("rate-limit.routes")
		static class RouteRules {

		}

	}

}

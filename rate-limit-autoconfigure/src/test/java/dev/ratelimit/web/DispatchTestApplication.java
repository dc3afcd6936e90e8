package dev.ratelimit.web;

import java.io.IOException;
import java.util.concurrent.Callable;

import jakarta.servlet.Filter;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ResponseBody;

import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.web.servlet.RateLimitFilter;
import dev.ratelimit.web.servlet.Rejections;

/**
 * An application whose every path, {@code /error} included, is limited by one
 * route rule ({@code /** -> per-user}, 100 per caller per day), with handlers
 * that forward, include, fail, send an error and answer asynchronously: the
 * dispatches in which the route filter must not count a request a second time.
 * A filter ahead of the limiter forwards {@code /moved} to {@code /target}, so
 * that the limiter first sees that request in a forward. With
 * {@code test.second-filter=true} a second instance of the filter, with the same
 * rules, is registered as well.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
class DispatchTestApplication {

	/** Forwards {@code /moved} before the limiter has seen the request. */
	@Bean
	FilterRegistrationBean<Filter> movedFilter() {
		Filter moved = (request, response, chain) -> {
			if ("/moved".equals(((HttpServletRequest) request).getRequestURI())) {
				request.getRequestDispatcher("/target").forward(request, response);
				return;
			}
			chain.doFilter(request, response);
		};
		FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(moved);
		registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
		return registration;
	}

	@Bean
	@ConditionalOnBooleanProperty("test.second-filter")
	FilterRegistrationBean<RateLimitFilter> secondRateLimitFilter(
			@Qualifier("rateLimitFilterRegistration") FilterRegistrationBean<RateLimitFilter> first, RateLimiter limiter,
			KeyExpressions expressions, ClientIpResolver ipResolver, RateLimitHeaders headers, Rejections rejections) {
		RateLimitFilter second = new RateLimitFilter(first.getFilter().getRoutes(), limiter, expressions, ipResolver,
				headers, rejections);
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(second);
		registration.setName("secondRateLimitFilter");
		registration.setDispatcherTypes(RateLimitFilter.dispatcherTypes());
		registration.setOrder(first.getOrder() + 1);
		return registration;
	}

	@Controller
	static class Dispatching {

		@GetMapping("/target")
		@ResponseBody
		String target() {
			return "target";
		}

		@GetMapping("/forward")
		String forward() {
			return "forward:/target";
		}

		@GetMapping("/include")
		void include(HttpServletRequest request, HttpServletResponse response) throws ServletException, IOException {
			request.getRequestDispatcher("/target").include(request, response);
		}

		@GetMapping("/failing")
		@ResponseBody
		String failing() {
			throw new IllegalStateException("failing on purpose");
		}

		@GetMapping("/teapot")
		void teapot(HttpServletResponse response) throws IOException {
			response.sendError(418);
		}

		@GetMapping("/async")
		@ResponseBody
		Callable<String> async() {
			return () -> "async";
		}

	}

}

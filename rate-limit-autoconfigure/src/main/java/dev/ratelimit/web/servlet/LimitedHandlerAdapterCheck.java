package dev.ratelimit.web.servlet;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerAdapter;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;

import dev.ratelimit.core.RateLimitConfigurationException;

/**
 * Stops the start-up when a controller left without a proxy would not be
 * limited: {@link LimitedControllers} exempted it because the starter's
 * {@link LimitedHandlerAdapter} is to enforce its limits, so for each of its
 * limited handler methods the adapter the {@code DispatcherServlet} chooses
 * (the first, in order, that supports it) must be that one. An application
 * whose adapter was replaced or preceded by another (a library's, registered
 * after the starter's conditions were read) would otherwise run those methods
 * unlimited without a word. Adapters that serve other handlers only, such as
 * Spring Data REST's, do not matter.
 */
public final class LimitedHandlerAdapterCheck implements SmartInitializingSingleton {

	private final ListableBeanFactory beanFactory;

	private final LimitedControllers controllers;

	/**
	 * Creates the check.
	 * @param beanFactory the application's beans
	 * @param controllers the rule that exempted controllers from the proxy
	 */
	public LimitedHandlerAdapterCheck(ListableBeanFactory beanFactory, LimitedControllers controllers) {
		this.beanFactory = beanFactory;
		this.controllers = controllers;
	}

	@Override
	public void afterSingletonsInstantiated() {
		// Loops, not streams: this runs once, at start-up, where each lambda costs a class.
		List<HandlerAdapter> adapters = new ArrayList<>(
				this.beanFactory.getBeansOfType(HandlerAdapter.class, false, false).values());
		AnnotationAwareOrderComparator.sort(adapters);
		List<String> unlimited = new ArrayList<>();
		HandlerAdapter offending = null;
		for (RequestMappingInfoHandlerMapping mapping : this.beanFactory
			.getBeansOfType(RequestMappingInfoHandlerMapping.class, false, false)
			.values()) {
			for (HandlerMethod handler : mapping.getHandlerMethods().values()) {
				if (!this.controllers.enforces(handler)) {
					continue;
				}
				HandlerAdapter adapter = chosen(adapters, handler);
				if (!(adapter instanceof LimitedHandlerAdapter)) {
					unlimited.add(handler.getBeanType().getName() + "#" + handler.getMethod().getName());
					offending = adapter;
				}
			}
		}
		if (!unlimited.isEmpty()) {
			throw new RateLimitConfigurationException("The limits of " + unlimited + " are enforced by the "
					+ "starter's LimitedHandlerAdapter, without a proxy, but Spring MVC would call them through "
					+ ((offending != null) ? "a " + offending.getClass().getName() : "no handler adapter")
					+ ": those methods would not be limited.",
					"Set rate-limit.web.controller-proxies=true to limit controllers through a proxy, or build the "
							+ "RequestMappingHandlerAdapter you provide as a dev.ratelimit.web.servlet.LimitedHandlerAdapter "
							+ "(with the LimitedControllers and LimitInterceptor beans).",
					null);
		}
	}

	/** The adapter the {@code DispatcherServlet} would choose for a handler: the first that supports it. */
	private static @Nullable HandlerAdapter chosen(List<HandlerAdapter> adapters, HandlerMethod handler) {
		for (HandlerAdapter adapter : adapters) {
			if (adapter.supports(handler)) {
				return adapter;
			}
		}
		return null;
	}

}

package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

import dev.ratelimit.aop.AnnotatedBeans;
import dev.ratelimit.core.RateLimitConfigurationException;

/**
 * Stops the start-up when a controller left without a proxy would not be
 * limited: {@link LimitedControllers} exempted it because the starter's
 * {@link LimitedHandlerAdapter} is to enforce its limits, so every
 * {@link RequestMappingHandlerAdapter} of the application must be that one.
 * An application whose own configuration replaced it (its own
 * {@code WebMvcRegistrations} or adapter bean, added by a library after the
 * starter's conditions were read) would otherwise run those methods
 * unlimited without a word.
 */
public final class LimitedHandlerAdapterCheck implements SmartInitializingSingleton {

	private final ListableBeanFactory beanFactory;

	private final AnnotatedBeans beans;

	private final LimitedControllers controllers;

	/**
	 * Creates the check.
	 * @param beanFactory the application's beans
	 * @param beans the limited methods of its beans
	 * @param controllers the rule that exempted controllers from the proxy
	 */
	public LimitedHandlerAdapterCheck(ListableBeanFactory beanFactory, AnnotatedBeans beans,
			LimitedControllers controllers) {
		this.beanFactory = beanFactory;
		this.beans = beans;
		this.controllers = controllers;
	}

	@Override
	public void afterSingletonsInstantiated() {
		// Loops, not streams: this runs once, at start-up, where each lambda costs a class.
		List<String> exempt = new ArrayList<>();
		for (AnnotatedBeans.AnnotatedMethod method : this.beans.methods()) {
			if (this.controllers.isExempt(method.beanType())) {
				exempt.add(method.where());
			}
		}
		if (exempt.isEmpty()) {
			return;
		}
		Map<String, RequestMappingHandlerAdapter> adapters = this.beanFactory
			.getBeansOfType(RequestMappingHandlerAdapter.class, false, false);
		for (Map.Entry<String, RequestMappingHandlerAdapter> entry : adapters.entrySet()) {
			String name = entry.getKey();
			RequestMappingHandlerAdapter adapter = entry.getValue();
			if (!(adapter instanceof LimitedHandlerAdapter)) {
				throw new RateLimitConfigurationException("The limits of " + exempt + " are enforced by the "
						+ "starter's LimitedHandlerAdapter, without a proxy, but the application's "
						+ "RequestMappingHandlerAdapter '" + name + "' is a " + adapter.getClass().getName()
						+ ": those methods would not be limited.",
						"Set rate-limit.web.controller-proxies=true to limit controllers through a proxy, or "
								+ "extend dev.ratelimit.web.LimitedHandlerAdapter in the adapter you provide.",
						null);
			}
		}
	}

}

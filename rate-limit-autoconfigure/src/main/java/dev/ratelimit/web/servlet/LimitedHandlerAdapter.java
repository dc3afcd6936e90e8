package dev.ratelimit.web.servlet;

import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.servlet.mvc.method.annotation.ServletInvocableHandlerMethod;

/**
 * Spring MVC's {@link RequestMappingHandlerAdapter}, enforcing the limits of
 * the controllers {@link LimitedControllers} exempts from a proxy: the handler
 * method it invokes for such a limited method hands its resolved arguments to
 * the limit advice ({@link LimitedHandlerMethod}), which decides the limits,
 * calls the method and settles what it took, as it does behind a proxy.
 * Every other handler method is invoked as Spring MVC's own adapter does.
 * Spring Boot uses it through {@code WebMvcRegistrations}; the starter checks
 * at start-up that it is the adapter in use (see
 * {@code rate-limit.web.controller-proxies}).
 */
public class LimitedHandlerAdapter extends RequestMappingHandlerAdapter {

	private final LimitedControllers controllers;

	private final MethodInterceptor advice;

	/**
	 * Creates the adapter.
	 * @param controllers which handler methods it limits
	 * @param advice the limit advice, the one the proxies apply
	 */
	public LimitedHandlerAdapter(LimitedControllers controllers, MethodInterceptor advice) {
		this.controllers = controllers;
		this.advice = advice;
	}

	@Override
	protected ServletInvocableHandlerMethod createInvocableHandlerMethod(HandlerMethod handlerMethod) {
		if (this.controllers.enforces(handlerMethod)) {
			return new LimitedHandlerMethod(handlerMethod, this.advice);
		}
		return super.createInvocableHandlerMethod(handlerMethod);
	}

}

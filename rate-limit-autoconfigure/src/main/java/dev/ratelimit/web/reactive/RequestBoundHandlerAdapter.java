package dev.ratelimit.web.reactive;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.web.reactive.BoundRequests.Bound;

/**
 * WebFlux's {@link RequestMappingHandlerAdapter}, calling the limited handler
 * methods that return a plain value (neither {@code Mono} nor {@code Flux})
 * with their request in reach, so that they are limited per caller as on the
 * servlet side: the request, with its principal, is bound to the thread that
 * calls the method ({@link BoundRequests}), the limit advice reads keys from
 * it, discloses the limits and writes the header fields to its response. A
 * method whose limits may block as they decide (a Redis store, a wait) is
 * called off the event loop, as WebFlux calls a blocking controller method:
 * on the application's blocking executor when it configured one, else on
 * Reactor's bounded elastic scheduler. Every other handler method is invoked
 * as WebFlux's own adapter does. Spring Boot uses it through
 * {@code WebFluxRegistrations}.
 */
public class RequestBoundHandlerAdapter extends RequestMappingHandlerAdapter {

	/** How a handler method is called. */
	public enum Binding {

		/** Not limited, or deferred (its limits read the request from the pipeline): as WebFlux calls it. */
		NONE,

		/** Limited, deciding without blocking: on the event loop, with its request bound. */
		ON_LOOP,

		/** Limited, deciding in a way that may block: off the event loop, with its request bound. */
		OFF_LOOP

	}

	/** Says how a handler method is called, from its method and the class of its bean. */
	@FunctionalInterface
	public interface Bindings {

		/**
		 * Returns how a handler method is called.
		 * @param method the method
		 * @param beanType the class of its bean
		 * @return the binding
		 */
		Binding of(Method method, Class<?> beanType);

	}

	private final Bindings bindings;

	/** Each handler method's binding, with the bean type it was found for. */
	private final Map<Method, Known> known = new ConcurrentHashMap<>();

	private @Nullable Executor blockingExecutor;

	private @Nullable Predicate<HandlerMethod> blockingMethods;

	/**
	 * Creates the adapter.
	 * @param bindings how each handler method is called
	 */
	public RequestBoundHandlerAdapter(Bindings bindings) {
		this.bindings = bindings;
	}

	/** Kept: it runs the application's own blocking controller methods, and the limited ones that may block. */
	@Override
	public void setBlockingExecutor(@Nullable Executor executor) {
		this.blockingExecutor = executor;
	}

	/** Kept: the application's blocking controller methods are called on its executor as before. */
	@Override
	public void setBlockingMethodPredicate(Predicate<HandlerMethod> predicate) {
		this.blockingMethods = predicate;
	}

	@Override
	public void afterPropertiesSet() throws Exception {
		Executor own = this.blockingExecutor;
		Predicate<HandlerMethod> blocking = (own == null) ? (method) -> false
				: (this.blockingMethods != null) ? this.blockingMethods : this::returnsPlainValue;
		Executor target = (own != null) ? own : (task) -> Schedulers.boundedElastic().schedule(task);
		// Tasks handed over with a request bound (a limited method's call) run with it bound again.
		super.setBlockingExecutor(BoundRequests.carrying(target));
		super.setBlockingMethodPredicate((method) -> binding(method) == Binding.OFF_LOOP || blocking.test(method));
		super.afterPropertiesSet();
	}

	@Override
	public Mono<HandlerResult> handle(ServerWebExchange exchange, Object handler) {
		if (!(handler instanceof HandlerMethod method) || binding(method) == Binding.NONE) {
			return super.handle(exchange, handler);
		}
		Principal known = ReactiveExchange.principalIfKnown(exchange);
		if (known != null) {
			return bound(exchange, handler, known);
		}
		return ReactiveExchange.principal(exchange).flatMap((principal) -> bound(exchange, handler, principal));
	}

	/**
	 * Calls the handler with its request bound: while its pipeline is
	 * subscribed to (arguments at hand: the method is called then) and while
	 * the exchange's asynchronous parts deliver (an argument read from the
	 * body: the method is called when the body ends).
	 */
	private Mono<HandlerResult> bound(ServerWebExchange exchange, Object handler, Principal principal) {
		Bound request = new Bound(exchange, principal);
		return BoundRequests.bound(request, super.handle(new BoundExchange(exchange, request), handler));
	}

	/**
	 * Returns how a handler method is called.
	 * @param method the handler method
	 * @return its binding
	 */
	public Binding binding(HandlerMethod method) {
		Method target = method.getMethod();
		Class<?> beanType = method.getBeanType();
		Known known = this.known.get(target);
		if (known != null && known.beanType() == beanType) {
			return known.binding();
		}
		Binding binding = this.bindings.of(target, beanType);
		// A method inherited by two controllers is asked again for the second: it is rare, and each may differ.
		this.known.putIfAbsent(target, new Known(beanType, binding));
		return binding;
	}

	/** WebFlux's own rule for which controller methods block: those whose return type is not reactive. */
	private boolean returnsPlainValue(HandlerMethod method) {
		ReactiveAdapterRegistry registry = Objects.requireNonNull(getReactiveAdapterRegistry(),
				"the adapter is initialized before it handles requests");
		return registry.getAdapter(method.getReturnType().getParameterType()) == null;
	}

	private record Known(Class<?> beanType, Binding binding) {
	}

}

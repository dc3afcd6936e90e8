package dev.ratelimit.web.reactive;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.key.KeyRequest;
import dev.ratelimit.key.RequestBinding;
import dev.ratelimit.web.Disclosures;
import dev.ratelimit.web.WebContract;
import dev.ratelimit.web.WebRequestBinding;
import dev.ratelimit.web.reactive.BoundRequests.Bound;

/**
 * {@link RequestBinding} for WebFlux applications. A WebFlux request is not
 * the calling thread's: it travels in the Reactor context of the pipeline that
 * serves it (put there by Spring's {@link ServerWebExchangeContextFilter}).
 * So a limited call of a method returning {@code Mono} or {@code Flux} is
 * deferred into that pipeline: when it is subscribed to, the exchange is read
 * from the context and bound to the thread for the call's decisions and the
 * method's own call, so that key expressions read the request, the limits
 * applied to the handler are disclosed by the same rule as on the servlet side,
 * and their decisions become header fields. The decisions never make the
 * subscribing thread (an event loop) wait: on Redis they are Lettuce's
 * asynchronous calls, in memory they are taken inline, a wait in wait mode is
 * a {@link Mono#delay}, and only what can only block (a store without an
 * asynchronous client, a local cap that waits for a permit) runs on Reactor's
 * bounded elastic scheduler (see {@link ReactorDecisionThreads}). The method
 * is then called on the thread its last decision completed on, the request
 * bound again. What a call does once its result ends (a permit's release, a
 * budget's settle, a give-back) runs on the bounded elastic scheduler when it
 * may block, whatever thread the end comes on. Each subscription is a call of
 * its own, decided again.
 * <p>
 * A method returning anything else is called at once, without the request.
 */
public final class ReactiveRequestBinding extends WebRequestBinding<ServerWebExchange, ServerHttpResponse> {

	private final DecisionThreads threads;

	private final BooleanSupplier handlersBound;

	/**
	 * Creates a binding for an application whose handler methods are called
	 * as WebFlux calls them, without their request.
	 * @param contract the web contract it writes and reads the caller by
	 * @param threads where a decision does what it cannot do inline: a store call that can only block, a wait
	 */
	public ReactiveRequestBinding(WebContract contract, DecisionThreads threads) {
		this(contract, threads, () -> false);
	}

	/**
	 * Creates a binding.
	 * @param contract the web contract it writes and reads the caller by
	 * @param threads where a decision does what it cannot do inline: a store call that can only block, a wait
	 * @param handlersBound whether handler methods returning a plain value are called with their request bound
	 * ({@link RequestBoundHandlerAdapter} in use); asked at start-up, for the report
	 */
	public ReactiveRequestBinding(WebContract contract, DecisionThreads threads, BooleanSupplier handlersBound) {
		super(contract, ReactiveRejections.RESPONSE_FIELDS);
		this.threads = threads;
		this.handlersBound = handlersBound;
	}

	@Override
	public boolean defers(Method method) {
		Class<?> type = method.getReturnType();
		return Mono.class.isAssignableFrom(type) || Flux.class.isAssignableFrom(type);
	}

	@Override
	public @Nullable String requestOutOfReach(Method method, Class<?> beanType) {
		if (defers(method)) {
			return null;
		}
		if (!this.handlersBound.getAsBoolean()) {
			return "in a WebFlux application whose RequestMappingHandlerAdapter is not the starter's (it has "
					+ "@EnableWebFlux or WebFluxRegistrations of its own), a method that returns neither Mono nor "
					+ "Flux is called with no request in reach";
		}
		if (AnnotatedElementUtils.hasAnnotation(beanType, Controller.class)
				&& AnnotatedElementUtils.hasAnnotation(method, RequestMapping.class)) {
			return null;
		}
		return "in a WebFlux application, a method that returns neither Mono nor Flux reads the request only when "
				+ "it is a controller's handler method, called by WebFlux";
	}

	@Override
	public Object call(Method method, LimitedCall call) {
		if (Flux.class.isAssignableFrom(method.getReturnType())) {
			return Flux.deferContextual((context) -> decided(context, call).flatMapMany((result) -> (Flux<?>) result));
		}
		return Mono.deferContextual((context) -> decided(context, call).flatMap((result) -> (Mono<?>) result));
	}

	/** Runs the call with the subscriber's request bound, each of its steps too. */
	private Mono<Object> decided(ContextView context, LimitedCall call) {
		ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(context).orElse(null);
		if (exchange == null) {
			return run(null, call);
		}
		return ReactiveExchange.principal(exchange).flatMap((principal) -> run(new Bound(exchange, principal), call));
	}

	private Mono<Object> run(@Nullable Bound request, LimitedCall call) {
		Executor inRequest = BoundRequests.inRequest(request);
		return Mono.defer(() -> {
			CompletionStage<Object> result;
			Bound outer = BoundRequests.bind(request);
			try {
				result = call.run(this.threads, inRequest);
			}
			finally {
				BoundRequests.restore(outer);
			}
			// Not cancelled with the subscription: once decided, the call goes on to its end, as a synchronous
			// decision would, so that what it took is settled by the result it returns.
			return Mono.fromFuture(result.toCompletableFuture(), true);
		});
	}

	/** @return the exchange of the call running on this thread, or {@code null} */
	private static @Nullable ServerWebExchange exchange() {
		Bound bound = BoundRequests.current();
		return (bound != null) ? bound.exchange() : null;
	}

	@Override
	public @Nullable Object ending(@Nullable Object result, boolean mayBlock) {
		if (!mayBlock) {
			return result;
		}
		// A result may end on an event loop (a WebClient's answer, a timer): settle where blocking is allowed.
		if (result instanceof Mono<?> mono) {
			return mono.publishOn(Schedulers.boundedElastic());
		}
		return (result instanceof Flux<?> flux) ? flux.publishOn(Schedulers.boundedElastic()) : result;
	}

	@Override
	public @Nullable Executor endingInRequest() {
		// The request of the call being made: bound again around its end, wherever the Mono or Flux ends.
		Bound request = BoundRequests.current();
		return (request != null) ? BoundRequests.inRequest(request) : null;
	}

	@Override
	public void finishing(boolean mayBlock, Runnable finish) {
		if (mayBlock && Schedulers.isInNonBlockingThread()) {
			// Cancelled on an event loop: nobody waits for the settle any more, so it runs on its own.
			Schedulers.boundedElastic().schedule(finish);
		}
		else {
			finish.run();
		}
	}

	@Override
	protected @Nullable ServerWebExchange request() {
		return exchange();
	}

	@Override
	protected @Nullable Disclosures disclosures(ServerWebExchange request) {
		return Disclosures.of(request.getAttributes());
	}

	@Override
	protected void attach(ServerWebExchange request, Disclosures disclosures) {
		request.getAttributes().putIfAbsent(Disclosures.ATTRIBUTE, disclosures);
	}

	@Override
	protected @Nullable Object handler(ServerWebExchange request) {
		return request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
	}

	@Override
	protected ServerHttpResponse response(ServerWebExchange request) {
		return request.getResponse();
	}

	@Override
	protected KeyRequest keyRequest(ServerWebExchange request) {
		Bound bound = BoundRequests.current();
		Principal principal = (bound != null && bound.exchange() == request) ? bound.principal()
				: ReactiveExchange.ANONYMOUS;
		return new ReactiveExchange(request, contract().ipResolver(), principal);
	}

}

package dev.ratelimit.web;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.concurrent.Callable;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.ClientIpResolver;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.Visibility;
import dev.ratelimit.key.KeyRequest;
import dev.ratelimit.key.RequestBinding;

/**
 * {@link RequestBinding} for WebFlux applications. A WebFlux request is not
 * the calling thread's: it travels in the Reactor context of the pipeline that
 * serves it (put there by Spring's {@link ServerWebExchangeContextFilter}).
 * So a limited call of a method returning {@code Mono} or {@code Flux} is
 * deferred into that pipeline: when it is subscribed to, the exchange is read
 * from the context and bound to the thread for the call's decisions and the
 * method's own call, so that key expressions read the request, the limits
 * applied to the handler are disclosed by the same rule as on the servlet side,
 * and their decisions become header fields. A call whose decisions may block
 * (a remote store, a limit that waits) runs on Reactor's bounded elastic
 * scheduler, never on the event loop, and so does what it does once the
 * result ends (a permit's release, a budget's settle, a give-back), whatever
 * thread the end comes on; one on the memory backend runs inline. Each
 * subscription is a call of its own, decided again.
 * <p>
 * A method returning anything else is called at once, without the request.
 */
public final class ReactiveRequestBinding implements RequestBinding {

	/** The request of the call running on this thread, bound only while it decides and calls the method. */
	private static final ThreadLocal<Bound> CURRENT = new ThreadLocal<>();

	private final ClientIpResolver ipResolver;

	private final RateLimitHeaders headers;

	private final BudgetHeaders budgetHeaders;

	/**
	 * Creates a binding.
	 * @param ipResolver resolves client addresses
	 * @param headers writes the rate-limit header fields
	 * @param budgetHeaders writes the budget header field
	 */
	public ReactiveRequestBinding(ClientIpResolver ipResolver, RateLimitHeaders headers, BudgetHeaders budgetHeaders) {
		this.ipResolver = ipResolver;
		this.headers = headers;
		this.budgetHeaders = budgetHeaders;
	}

	@Override
	public boolean defers(Method method) {
		Class<?> type = method.getReturnType();
		return Mono.class.isAssignableFrom(type) || Flux.class.isAssignableFrom(type);
	}

	@Override
	public Object call(Method method, boolean mayBlock, LimitedCall call) {
		if (Flux.class.isAssignableFrom(method.getReturnType())) {
			return Flux.deferContextual((context) -> decided(context, mayBlock, call).flatMapMany((result) -> (Flux<?>) result));
		}
		return Mono.deferContextual((context) -> decided(context, mayBlock, call).flatMap((result) -> (Mono<?>) result));
	}

	/** Runs the call with the subscriber's request bound: inline, or off the event loop when it may block. */
	private static Mono<Object> decided(ContextView context, boolean mayBlock, LimitedCall call) {
		ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(context).orElse(null);
		if (exchange == null) {
			return run(null, mayBlock, call);
		}
		return ReactiveKeyRequest.principal(exchange)
			.flatMap((principal) -> run(new Bound(exchange, principal), mayBlock, call));
	}

	private static Mono<Object> run(Bound request, boolean mayBlock, LimitedCall call) {
		Callable<Object> bound = () -> {
			Bound outer = CURRENT.get();
			CURRENT.set(request);
			try {
				return call.run();
			}
			catch (Exception | Error ex) {
				throw ex;
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
			finally {
				restore(outer);
			}
		};
		Mono<Object> decided = Mono.fromCallable(bound);
		return mayBlock ? decided.subscribeOn(Schedulers.boundedElastic()) : decided;
	}

	private static void restore(Bound outer) {
		if (outer != null) {
			CURRENT.set(outer);
		}
		else {
			CURRENT.remove();
		}
	}

	/** @return the exchange of the call running on this thread, or {@code null} */
	private static ServerWebExchange exchange() {
		Bound bound = CURRENT.get();
		return (bound != null) ? bound.exchange() : null;
	}

	@Override
	public Object ending(Object result, boolean mayBlock) {
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
	public KeyRequest current() {
		Bound bound = CURRENT.get();
		return (bound != null) ? new ReactiveKeyRequest(bound.exchange().getRequest(), this.ipResolver, bound.principal())
				: null;
	}

	@Override
	public void record(RateLimitOutcome outcome) {
		ServerWebExchange exchange = exchange();
		if (exchange != null && !exchange.getResponse().isCommitted()) {
			Disclosures disclosures = Disclosures.of(exchange.getAttributes());
			if (disclosures != null) {
				this.headers.record(disclosures, exchange.getResponse().getHeaders()::set, outcome);
			}
		}
	}

	@Override
	public void applying(String policy, Visibility visibility, String keyExpression, Method method) {
		ServerWebExchange exchange = exchange();
		if (exchange != null && visibility.disclosed(keyExpression, isHandler(exchange, method))) {
			Disclosures.attached(exchange.getAttributes()).add(policy);
		}
	}

	@Override
	public boolean isHandler(Method method) {
		ServerWebExchange exchange = exchange();
		return exchange != null && isHandler(exchange, method);
	}

	@Override
	public void recordBudget(BudgetPolicy policy, BudgetDecision decision) {
		ServerWebExchange exchange = exchange();
		if (exchange != null && !exchange.getResponse().isCommitted()) {
			this.budgetHeaders.record(Disclosures.attached(exchange.getAttributes()),
					exchange.getResponse().getHeaders()::set, policy, decision);
		}
	}

	private static boolean isHandler(ServerWebExchange exchange, Method method) {
		return HandlerMatch.isHandler(exchange.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE), method);
	}

	/**
	 * A request bound to the thread of a call: its exchange, and its principal,
	 * resolved from the pipeline before the call.
	 *
	 * @param exchange the exchange
	 * @param principal the principal, {@link ReactiveKeyRequest#ANONYMOUS} for an anonymous request
	 */
	private record Bound(ServerWebExchange exchange, Principal principal) {
	}

}

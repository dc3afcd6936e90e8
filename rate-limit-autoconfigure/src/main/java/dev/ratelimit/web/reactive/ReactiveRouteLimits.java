package dev.ratelimit.web.reactive;

import java.security.Principal;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.concurrency.ConcurrencyLimiter;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.web.MatchedLimits;
import dev.ratelimit.web.RateLimitHeaders;
import dev.ratelimit.web.RouteCall;
import dev.ratelimit.web.RouteLimits;
import dev.ratelimit.web.RouteRule;

/**
 * Applies a route's limits to a WebFlux request: adapts the exchange (with the
 * principal from the pipeline) to the one {@link RouteCall} every stack
 * shares, which decides, sets the header fields, holds the permits and settles
 * by outcome, and answers its refusal through {@link ReactiveRejections}.
 * Whoever found the limits: the route rules' {@link RateLimitWebFilter}, and a
 * Spring Cloud Gateway route's {@code RateLimit} filter.
 * <p>
 * The event loop never waits: a decision is asynchronous (see
 * {@link RateLimiter#acquireAsync}), taken inline in memory and through
 * Lettuce's asynchronous API on Redis, a wait in wait mode is a timer, and the
 * give-backs of permits and of rules counted by outcome on a store that may
 * block run on Reactor's bounded elastic scheduler. A request whose decision completed on
 * another thread (Lettuce's, a timer's) goes on on its own event loop
 * ({@link RequestLoops}).
 */
public final class ReactiveRouteLimits {

	private final RouteLimits limits;

	private final ClientIpResolver ipResolver;

	private final ReactiveRejections rejections;

	private final DecisionThreads threads;

	private final @Nullable RequestObservations observations;

	/**
	 * Creates the route limits.
	 * @param limiter decides
	 * @param expressions evaluates keys
	 * @param ipResolver resolves client addresses
	 * @param headers writes the header fields
	 * @param rejections answers refusals
	 * @param threads where a decision does what it cannot do inline: a store call that can only block, a wait
	 */
	public ReactiveRouteLimits(RateLimiter limiter, KeyExpressions expressions, ClientIpResolver ipResolver,
			RateLimitHeaders headers, ReactiveRejections rejections, DecisionThreads threads) {
		this(limiter, null, expressions, ipResolver, headers, rejections, threads);
	}

	/**
	 * Creates the route limits, with concurrency caps.
	 * @param limiter decides
	 * @param concurrency hands out the permits of concurrency caps; {@code null} for routes without caps
	 * @param expressions evaluates keys
	 * @param ipResolver resolves client addresses
	 * @param headers writes the header fields
	 * @param rejections answers refusals
	 * @param threads where a decision does what it cannot do inline: a store call that can only block, a wait
	 */
	public ReactiveRouteLimits(RateLimiter limiter, @Nullable ConcurrencyLimiter concurrency,
			KeyExpressions expressions, ClientIpResolver ipResolver, RateLimitHeaders headers,
			ReactiveRejections rejections, DecisionThreads threads) {
		this(new RouteLimits(limiter, concurrency, expressions, headers), ipResolver, rejections, threads, null);
	}

	/**
	 * Creates the route limits, deciding with the request's observation in
	 * scope.
	 * @param limits decides and answers what a route applies to a request
	 * @param ipResolver resolves client addresses
	 * @param rejections answers refusals
	 * @param threads where a decision does what it cannot do inline: a store call that can only block, a wait
	 * @param observations puts the request's observation in scope while it is decided, for the listeners that
	 * record on it; {@code null} when none does
	 */
	public ReactiveRouteLimits(RouteLimits limits, ClientIpResolver ipResolver, ReactiveRejections rejections,
			DecisionThreads threads, @Nullable RequestObservations observations) {
		this.limits = limits;
		this.ipResolver = ipResolver;
		this.rejections = rejections;
		this.threads = threads;
		this.observations = observations;
	}

	/**
	 * What continues a request once its limits allow it: the rest of a
	 * {@code WebFilterChain}, or of a gateway route's filter chain.
	 */
	@FunctionalInterface
	public interface Continuation {

		/**
		 * Continues the request.
		 * @param exchange the request and its response
		 * @return completes when the request is served
		 */
		Mono<Void> proceed(ServerWebExchange exchange);

	}

	/**
	 * Checks that route rules can be applied: a rule with a concurrency cap
	 * needs a {@code ConcurrencyLimiter}.
	 * @param routes the rules
	 * @throws IllegalArgumentException when a rule has a cap but there is no limiter for it
	 */
	void check(List<RouteRule> routes) {
		this.limits.check(routes);
	}

	/**
	 * Applies a route's policies and caps to a request: continues it when they
	 * allow it (with the header fields set), answers it when they refuse it.
	 * The policies decide first; an allowed request then takes a permit of each
	 * cap and holds them until it is served.
	 * @param exchange the request
	 * @param limits the policies and caps, each once, in order; none continues the request as it is
	 * @param next what serves an allowed request
	 * @return completes when the request is served or refused
	 */
	public Mono<Void> apply(ServerWebExchange exchange, MatchedLimits limits, Continuation next) {
		return apply(exchange(exchange), limits, next);
	}

	/**
	 * Adapts a WebFlux exchange to the shared contract, once per request.
	 * @param exchange the exchange
	 * @return the exchange as route rules match it and keys read it
	 */
	ReactiveExchange exchange(ServerWebExchange exchange) {
		return new ReactiveExchange(exchange, this.ipResolver, null);
	}

	/**
	 * Applies a route's policies and caps to a request adapted already.
	 * @param exchange the request
	 * @param limits the policies and caps, each once, in order
	 * @param next what serves an allowed request
	 * @return completes when the request is served or refused
	 */
	Mono<Void> apply(ReactiveExchange exchange, MatchedLimits limits, Continuation next) {
		if (limits.isEmpty()) {
			return next.proceed(exchange.exchange());
		}
		Principal known = ReactiveExchange.principalIfKnown(exchange.exchange());
		if (known != null) {
			// No principal to wait for (no security in the pipeline): decided without building a pipeline for it.
			return inScope(exchange.principal(known), limits, next);
		}
		return ReactiveExchange.principal(exchange.exchange())
			.flatMap((principal) -> inScope(exchange.principal(principal), limits, next));
	}

	/** Decided with the request's observation in scope when there is one to record on. */
	private Mono<Void> inScope(ReactiveExchange exchange, MatchedLimits limits, Continuation next) {
		RequestObservations observations = this.observations;
		if (observations != null && observations.observed(exchange.exchange())) {
			return observations.inScope(() -> decide(exchange, limits, next));
		}
		return decide(exchange, limits, next);
	}

	/**
	 * Takes the steps that need not wait inline, as a servlet request does,
	 * with no stage to wrap; a step that could block (a Redis call, a wait, a
	 * store that only blocks) as a stage, going on on the request's own event
	 * loop once it completes ({@link RequestLoops}). Permits that arrive after
	 * the request was cancelled go back at once.
	 */
	private Mono<Void> decide(ReactiveExchange web, MatchedLimits limits, Continuation next) {
		ServerWebExchange exchange = web.exchange();
		RouteCall call;
		RouteCall.Step step;
		try {
			call = this.limits.call(web, limits, this.threads);
			step = call.advance();
		}
		catch (RuntimeException ex) {
			return Mono.error(ex);
		}
		if (step != RouteCall.Step.PENDING) {
			return served(exchange, call, step, next);
		}
		// Cancelling the stage would skip what completes it (a permit then held by no one): a cancelled request
		// ends its call instead, and what arrives after that goes back at once.
		return Mono
			.fromFuture(() -> RequestLoops.backOnLoop(exchange.getRequest(), call.resume()).toCompletableFuture(), true)
			.flatMap((resumed) -> served(exchange, call, resumed, next))
			.doOnCancel(() -> call.end(ReactiveExchange.status(exchange.getResponse()), false, true));
	}

	/** Serves or refuses a decided request, and ends its call when it is done. */
	private Mono<Void> served(ServerWebExchange exchange, RouteCall call, RouteCall.Step step, Continuation next) {
		Mono<Void> answer = (step == RouteCall.Step.REFUSED) ? this.rejections.send(exchange, call.refusal())
				: next.proceed(exchange);
		if (!call.endMatters()) {
			return answer;
		}
		// An error is settled by the status the exception handlers after the filters will answer, as a servlet
		// filter reads it from the response.
		return answer.doOnError((failure) -> call.end(this.rejections.statusOf(exchange, failure), true, false))
			.doFinally((signal) -> call.end(ReactiveExchange.status(exchange.getResponse()), false,
					signal == SignalType.CANCEL));
	}

	/**
	 * Decides policies for a key given by someone else, without the request
	 * (Spring Cloud Gateway's {@code RequestRateLimiter}): see
	 * {@link RouteLimits#decide}.
	 * @param policies the policies, each once, in order
	 * @param key the caller's key
	 * @return the verdict
	 */
	public Mono<RouteLimits.Verdict> decide(List<BoundPolicy> policies, String key) {
		// No request here: the gateway's filter goes on where the decision completed.
		return Mono.fromFuture(() -> this.limits.decide(policies, key, this.threads, this.rejections.refusals())
			.toCompletableFuture(), true);
	}

}

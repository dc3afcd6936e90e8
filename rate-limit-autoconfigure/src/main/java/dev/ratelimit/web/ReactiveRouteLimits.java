package dev.ratelimit.web;

import java.security.Principal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Schedulers;

import org.springframework.expression.EvaluationContext;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.concurrency.ConcurrencyLimiter;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.OutcomeSettlement;

/**
 * Applies a list of policies to a WebFlux request, as a route applies them:
 * keys read from the request (with the principal from the pipeline), one
 * decision for all of them, the header fields of the limits the caller may
 * see, counting by outcome, and the refusal answered through
 * {@link ReactiveRejections}. The one place for it, whoever found the policies:
 * the route rules' {@link RateLimitWebFilter}, and a Spring Cloud Gateway route's
 * {@code RateLimit} filter.
 * <p>
 * The event loop never waits: a decision is asynchronous (see
 * {@link RateLimiter#acquireAsync}), taken inline in memory and through
 * Lettuce's asynchronous API on Redis, a wait in wait mode is a timer, and the
 * give-backs of rules counted by outcome on a store that may block run on
 * Reactor's bounded elastic scheduler. A request whose decision completed on
 * another thread (Lettuce's, a timer's) goes on on its own event loop
 * ({@link RequestLoops}).
 */
public final class ReactiveRouteLimits {

	/** Writes a gateway verdict's fields. */
	private static final HeaderWriter<Map<String, String>> MAP_FIELDS = Map::put;

	/** How {@link #decide(List, String)} names the key it is given, for the visibility rule: the caller's. */
	private static final String GIVEN_KEY = "given";

	private final RateLimiter limiter;

	private final KeyExpressions expressions;

	private final ClientIpResolver ipResolver;

	private final RateLimitHeaders headers;

	private final ReactiveRejections rejections;

	private final DecisionThreads threads;

	private final @Nullable RoutePermits permits;

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
		this(limiter, concurrency, expressions, ipResolver, headers, rejections, threads, null);
	}

	/**
	 * Creates the route limits, with concurrency caps, deciding with the
	 * request's observation in scope.
	 * @param limiter decides
	 * @param concurrency hands out the permits of concurrency caps; {@code null} for routes without caps
	 * @param expressions evaluates keys
	 * @param ipResolver resolves client addresses
	 * @param headers writes the header fields
	 * @param rejections answers refusals
	 * @param threads where a decision does what it cannot do inline: a store call that can only block, a wait
	 * @param observations puts the request's observation in scope while it is decided, for the listeners that
	 * record on it; {@code null} when none does
	 */
	public ReactiveRouteLimits(RateLimiter limiter, @Nullable ConcurrencyLimiter concurrency,
			KeyExpressions expressions, ClientIpResolver ipResolver, RateLimitHeaders headers,
			ReactiveRejections rejections, DecisionThreads threads, @Nullable RequestObservations observations) {
		this.observations = observations;
		this.permits = (concurrency != null) ? new RoutePermits(concurrency) : null;
		this.limiter = limiter;
		this.expressions = expressions;
		this.ipResolver = ipResolver;
		this.headers = headers;
		this.rejections = rejections;
		this.threads = threads;
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
	 * Applies policies to a request: continues it when they allow it (with the
	 * header fields set), answers it when they refuse it.
	 * @param exchange the request
	 * @param policies the policies, each once, in order; none continues the request as it is
	 * @param next what serves an allowed request
	 * @return completes when the request is served or refused
	 */
	public Mono<Void> apply(ServerWebExchange exchange, List<BoundPolicy> policies, Continuation next) {
		return apply(exchange, policies, List.of(), next);
	}

	/**
	 * Applies a route's policies and caps to a request: the policies decide
	 * first; an allowed request then takes a permit of each cap and holds them
	 * until it is served.
	 * @param exchange the request
	 * @param limits the policies and caps, each once, in order
	 * @param next what serves an allowed request
	 * @return completes when the request is served or refused
	 */
	Mono<Void> apply(ServerWebExchange exchange, MatchedLimits limits, Continuation next) {
		return apply(exchange, limits.policies(), limits.caps(), next);
	}

	private Mono<Void> apply(ServerWebExchange exchange, List<BoundPolicy> policies,
			List<AppliedLimit<ConcurrencyPolicy>> caps, Continuation next) {
		if (policies.isEmpty() && caps.isEmpty()) {
			return next.proceed(exchange);
		}
		Principal known = ReactiveKeyRequest.principalIfKnown(exchange);
		if (known != null) {
			// No principal to wait for (no security in the pipeline): decided without building a pipeline for it.
			return apply(exchange, next, policies, caps, known);
		}
		return ReactiveKeyRequest.principal(exchange)
			.flatMap((principal) -> apply(exchange, next, policies, caps, principal));
	}

	private Mono<Void> apply(ServerWebExchange exchange, Continuation proceed, List<BoundPolicy> policies,
			List<AppliedLimit<ConcurrencyPolicy>> caps, Principal principal) {
		RequestObservations observations = this.observations;
		if (observations != null && observations.observed(exchange)) {
			return observations.inScope(() -> decide(exchange, proceed, policies, caps, principal));
		}
		return decide(exchange, proceed, policies, caps, principal);
	}

	private Mono<Void> decide(ServerWebExchange exchange, Continuation proceed, List<BoundPolicy> policies,
			List<AppliedLimit<ConcurrencyPolicy>> caps, Principal principal) {
		Disclosures disclosures = Disclosures.attached(exchange.getAttributes());
		EvaluationContext context = this.expressions
			.context(new ReactiveKeyRequest(exchange.getRequest(), this.ipResolver, principal), null, null);
		// The caps come after the policies, as on an annotated method; a request a cap refuses is answered
		// there, and a rule counting by outcome settles it by that answer's status.
		Continuation next = caps.isEmpty() ? proceed
				: (continued) -> deferred(continued, () -> holdingPermits(continued, proceed, caps, context, disclosures));
		if (policies.isEmpty()) {
			return next.proceed(exchange);
		}
		List<LimitRequest> calls;
		try {
			calls = requests(disclosures, policies, context);
		}
		catch (RateLimitException ex) {
			// A missing key a policy rejects, or an invalid cost: answered, never thrown at the server.
			return this.rejections.send(exchange, ex);
		}
		boolean blocking = this.limiter.mayBlockCalls(calls);
		if (!blocking) {
			// In memory, with nothing to wait for: decided inline, as a servlet request is, with no stage to wrap.
			RateLimitOutcome outcome;
			try {
				outcome = this.limiter.acquire(calls);
			}
			catch (RateLimitException refusal) {
				return this.rejections.send(exchange, refusal);
			}
			return decided(exchange, next, policies, context, disclosures, outcome, false);
		}
		return acquire(exchange, calls)
			.flatMap((outcome) -> decided(exchange, next, policies, context, disclosures, outcome, true))
			.onErrorResume(RateLimitException.class, (refusal) -> this.rejections.send(exchange, refusal));
	}

	/** Deferred to its subscription, with the request's observation in scope when there is one to record on. */
	private Mono<Void> deferred(ServerWebExchange exchange, Supplier<Mono<Void>> work) {
		RequestObservations observations = this.observations;
		return (observations != null && observations.observed(exchange)) ? observations.inScope(work)
				: Mono.defer(work);
	}

	/** Goes on with a decided request: its header fields, then the refusal, or the rest of the chain. */
	private Mono<Void> decided(ServerWebExchange exchange, Continuation next, List<BoundPolicy> policies,
			EvaluationContext context, Disclosures disclosures, RateLimitOutcome outcome, boolean blocking) {
		this.headers.record(disclosures, exchange.getResponse(), ReactiveRejections.RESPONSE_FIELDS, outcome);
		if (!outcome.allowed()) {
			return this.rejections.send(exchange, new RateLimitExceededException(outcome));
		}
		if (outcome.provisional().isEmpty()) {
			return next.proceed(exchange);
		}
		return continueCountingByOutcome(exchange, next, policies, outcome, context, blocking);
	}

	/**
	 * Takes the permits of a route's caps and serves the request holding them,
	 * giving them back when it is served, fails or is cancelled: inline when no
	 * cap may block, else asynchronously, going on on the request's event loop.
	 * Permits that arrive after the request was cancelled go back at once.
	 */
	private Mono<Void> holdingPermits(ServerWebExchange exchange, Continuation next,
			List<AppliedLimit<ConcurrencyPolicy>> caps,
			EvaluationContext context, Disclosures disclosures) {
		RoutePermits permits = Objects.requireNonNull(this.permits,
				"A route rule has a concurrency cap but no ConcurrencyLimiter is given");
		RoutePermits.Held held = new RoutePermits.Held();
		if (!permits.mayBlock(caps)) {
			try {
				held.hold(permits.take(caps, context, disclosures));
			}
			catch (RateLimitException refusal) {
				return this.rejections.send(exchange, refusal);
			}
			return holding(exchange, next, held);
		}
		return Mono.fromCompletionStage(() -> RequestLoops.backOnLoop(exchange.getRequest(),
				permits.takeAsync(caps, context, disclosures, this.threads).handle((taken, failure) -> {
					if (failure != null) {
						return refused(exchange, AsyncCalls.cause(failure));
					}
					held.hold(taken);
					return holding(exchange, next, held);
				})))
			.flatMap((served) -> served)
			.doOnCancel(() -> held.release(Permit.Ending.ABANDONED));
	}

	private Mono<Void> refused(ServerWebExchange exchange, RuntimeException failure) {
		return (failure instanceof RateLimitException refusal) ? this.rejections.send(exchange, refusal)
				: Mono.error(failure);
	}

	private static Mono<Void> holding(ServerWebExchange exchange, Continuation next, RoutePermits.Held held) {
		return next.proceed(exchange).doFinally((signal) -> {
			if (signal == SignalType.CANCEL) {
				// Its client went away: the call says nothing about the service.
				held.release(Permit.Ending.ABANDONED);
				return;
			}
			HttpStatusCode code = exchange.getResponse().getStatusCode();
			held.release(RoutePermits.ending((code != null) ? code.value() : 200, signal == SignalType.ON_ERROR));
		});
	}

	/**
	 * Decides policies for a key given by someone else, without the request
	 * (Spring Cloud Gateway's {@code RequestRateLimiter}, whose key resolver
	 * gives the key): the same decision, and the header fields a response would
	 * carry, {@code Retry-After} included when refused. The key is taken for the
	 * caller's: a policy of visibility {@code auto} is told about.
	 * @param policies the policies, each once, in order
	 * @param key the caller's key
	 * @return the verdict
	 */
	public Mono<Verdict> decide(List<BoundPolicy> policies, String key) {
		Disclosures disclosures = Disclosures.attached(new LinkedHashMap<>(2));
		EvaluationContext context = this.expressions.context(null, null, null);
		List<LimitRequest> calls = new ArrayList<>(policies.size());
		for (BoundPolicy bound : policies) {
			// Keyed by what the key resolver gives, the caller's own key, whatever the policy's key says.
			if (bound.policy().visibility().disclosed(GIVEN_KEY, true)) {
				disclosures.add(bound.policy().name());
			}
			AppliedLimit<RateLimitPolicy> applied = bound.applied();
			// No request to read: only an exemption by condition applies, and the variant is the key's.
			if (!applied.exempt(context)) {
				calls.add(new LimitRequest(applied.select(key, context), key, 1));
			}
		}
		Map<String, String> fields = new LinkedHashMap<>();
		// No request here: the gateway's filter goes on where the decision completed.
		return acquire(null, calls).map((outcome) -> {
			this.headers.record(disclosures, fields, MAP_FIELDS, outcome);
			if (outcome.allowed()) {
				return new Verdict(true, fields);
			}
			return refused(disclosures, new RateLimitExceededException(outcome), fields);
		}).onErrorResume(RateLimitException.class, (refusal) -> Mono.just(refused(disclosures, refusal, fields)));
	}

	private Verdict refused(Disclosures disclosures, RateLimitException refusal, Map<String, String> fields) {
		RefusalFields.write(this.rejections.refusals().describe(disclosures, refusal), fields, MAP_FIELDS);
		return new Verdict(false, fields);
	}


	/**
	 * The verdict on a call decided by {@link #decide(List, String)}.
	 *
	 * @param allowed whether the call may go on
	 * @param headers the header fields to answer with, in order
	 */
	public record Verdict(boolean allowed, Map<String, String> headers) {
	}

	/**
	 * Takes the decision, the one call to the limiter, without waiting: inline
	 * in memory, through Lettuce's asynchronous API on Redis; a wait for its
	 * turn (wait mode, shaping) is a Reactor timer. The request goes on on its
	 * own event loop, not on the thread the decision completed on (see
	 * {@link RequestLoops}).
	 */
	private Mono<RateLimitOutcome> acquire(@Nullable ServerWebExchange exchange, List<LimitRequest> calls) {
		return Mono.fromCompletionStage(() -> {
			CompletionStage<RateLimitOutcome> decision = this.limiter.acquireAsync(calls, this.threads);
			return (exchange != null) ? RequestLoops.backOnLoop(exchange.getRequest(), decision) : decision;
		});
	}

	/**
	 * Continues a request that counts by outcome and settles it by its final
	 * status once it is done; an error counts as 500. A request cancelled (its
	 * client went away) before it had a status keeps its units, whatever the
	 * rule: its work may have run, and a client must not be able to erase what
	 * a call cost by hanging up (a brute-force attempt whose password was
	 * checked); with a status, it is settled by it.
	 */
	private Mono<Void> continueCountingByOutcome(ServerWebExchange exchange, Continuation next,
			List<BoundPolicy> policies, RateLimitOutcome outcome, EvaluationContext context, boolean blocking) {
		return next.proceed(exchange).doFinally((signal) -> {
			HttpStatusCode code = exchange.getResponse().getStatusCode();
			if (signal == SignalType.CANCEL && code == null) {
				// Given up before it had a status: its work may have run (a password checked), so it keeps its units.
				return;
			}
			int status = (signal == SignalType.ON_ERROR && (code == null || code.value() < 400)) ? 500
					: (code != null) ? code.value() : 200;
			Runnable settle = () -> OutcomeSettlement.settle(policies, outcome, context, null, null, status);
			if (blocking) {
				Schedulers.boundedElastic().schedule(settle);
			}
			else {
				settle.run();
			}
		});
	}

	private List<LimitRequest> requests(Disclosures disclosures, List<BoundPolicy> policies,
			EvaluationContext context) {
		List<LimitRequest> calls = new ArrayList<>(policies.size());
		for (BoundPolicy bound : policies) {
			disclose(disclosures, bound.policy());
			LimitRequest call = bound.toRequest(this.expressions, context);
			if (call != null) {
				calls.add(call);
			}
		}
		return calls;
	}

	/** A route's policy is enforced on the request itself: told to the caller when keyed by it. */
	private static void disclose(Disclosures disclosures, RateLimitPolicy policy) {
		if (policy.visibility().disclosed(policy.key(), true)) {
			disclosures.add(policy.name());
		}
	}

}

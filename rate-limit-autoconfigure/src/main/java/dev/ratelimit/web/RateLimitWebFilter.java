package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.Ordered;
import org.springframework.expression.EvaluationContext;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import dev.ratelimit.core.ClientIpResolver;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.OutcomeSettlement;

/**
 * Enforces the route rules of {@code rate-limit.routes} in a WebFlux
 * application, as {@link RateLimitFilter} does in a servlet one: the same
 * rules, path matching, keys (client addresses with the same trusted-proxy
 * rules), header fields and refusals. An allowed request continues with the
 * header fields set; a refused one is answered here through
 * {@link ReactiveRejections}.
 * <p>
 * The event loop never waits: a decision is asynchronous (see
 * {@link RateLimiter#acquireAsync}), taken inline in memory and through
 * Lettuce's asynchronous API on Redis, a wait in wait mode is a timer, and the
 * give-backs of rules counted by outcome on a store that may block run on
 * Reactor's bounded elastic scheduler.
 */
public final class RateLimitWebFilter implements WebFilter, Ordered {

	private final RouteRules rules;

	private final RateLimiter limiter;

	private final KeyExpressions expressions;

	private final ClientIpResolver ipResolver;

	private final RateLimitHeaders headers;

	private final ReactiveRejections rejections;

	private final int order;

	/**
	 * Creates the filter.
	 * @param routes the route rules, in configuration order
	 * @param limiter decides
	 * @param expressions evaluates keys
	 * @param ipResolver resolves client addresses
	 * @param headers writes the header fields
	 * @param rejections answers refusals
	 * @param order the filter's order ({@code rate-limit.filter.order})
	 */
	public RateLimitWebFilter(List<RouteRule> routes, RateLimiter limiter, KeyExpressions expressions,
			ClientIpResolver ipResolver, RateLimitHeaders headers, ReactiveRejections rejections, int order) {
		this.rules = new RouteRules(routes);
		this.limiter = limiter;
		this.expressions = expressions;
		this.ipResolver = ipResolver;
		this.headers = headers;
		this.rejections = rejections;
		this.order = order;
	}

	/**
	 * Returns the route rules, in configuration order.
	 * @return the rules
	 */
	public List<RouteRule> getRoutes() {
		return this.rules.routes();
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ServerHttpRequest request = exchange.getRequest();
		List<BoundPolicy> policies = matchingPolicies(request);
		if (policies.isEmpty()) {
			return chain.filter(exchange);
		}
		return ReactiveKeyRequest.principalName(exchange)
			.flatMap((principal) -> filter(exchange, chain, policies, ReactiveKeyRequest.orNull(principal)));
	}

	private Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain, List<BoundPolicy> policies,
			String principal) {
		Disclosures disclosures = Disclosures.attached(exchange.getAttributes());
		EvaluationContext context = this.expressions
			.context(new ReactiveKeyRequest(exchange.getRequest(), this.ipResolver, principal), null, null);
		List<LimitRequest> calls;
		try {
			calls = requests(disclosures, policies, context);
		}
		catch (RateLimitException ex) {
			// A missing key a policy rejects, or an invalid cost: answered, never thrown at the server.
			return this.rejections.send(exchange, ex);
		}
		boolean blocking = this.limiter.mayBlock(policiesOf(calls));
		Mono<RateLimitOutcome> decided = Mono
			.fromCompletionStage(() -> this.limiter.acquireAsync(calls, ReactorDecisionThreads.INSTANCE));
		return decided.flatMap((outcome) -> {
			this.headers.record(disclosures, exchange.getResponse().getHeaders()::set, outcome);
			if (!outcome.allowed()) {
				return this.rejections.send(exchange, new RateLimitExceededException(outcome));
			}
			if (outcome.provisional().isEmpty()) {
				return chain.filter(exchange);
			}
			return continueCountingByOutcome(exchange, chain, policies, outcome, context, blocking);
		}).onErrorResume(RateLimitException.class, (refusal) -> this.rejections.send(exchange, refusal));
	}

	/**
	 * Continues a request that counts by outcome and settles it by its final
	 * status once it is done; an error counts as 500. A request cancelled (its
	 * client went away) before it had a status keeps its units, whatever the
	 * rule: its work may have run, and a client must not be able to erase what
	 * a call cost by hanging up (a brute-force attempt whose password was
	 * checked); with a status, it is settled by it.
	 */
	private Mono<Void> continueCountingByOutcome(ServerWebExchange exchange, WebFilterChain chain,
			List<BoundPolicy> policies, RateLimitOutcome outcome, EvaluationContext context, boolean blocking) {
		return chain.filter(exchange).doFinally((signal) -> {
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
			RateLimitPolicy policy = bound.policy();
			// A route rule is enforced on the request itself.
			if (policy.visibility().disclosed(policy.key(), true)) {
				disclosures.add(policy.name());
			}
			LimitRequest call = bound.toRequest(this.expressions, context);
			if (call != null) {
				calls.add(call);
			}
		}
		return calls;
	}

	private static List<RateLimitPolicy> policiesOf(List<LimitRequest> calls) {
		List<RateLimitPolicy> policies = new ArrayList<>(calls.size());
		for (LimitRequest call : calls) {
			policies.add(call.policy());
		}
		return policies;
	}

	/** The policies of every rule that matches, each once, in rule order. */
	private List<BoundPolicy> matchingPolicies(ServerHttpRequest request) {
		String method = request.getMethod().name();
		return this.rules.matching((matcher) -> matcher.matches(method, request.getPath().pathWithinApplication()));
	}

	@Override
	public int getOrder() {
		return this.order;
	}

}

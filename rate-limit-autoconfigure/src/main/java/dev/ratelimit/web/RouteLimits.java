package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;
import org.springframework.expression.EvaluationContext;

import dev.ratelimit.concurrency.ConcurrencyLimiter;
import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;

/**
 * What a route's limits decide and answer, written once for every stack: the
 * servlet filter, the WebFlux filter and a gateway route's {@code RateLimit}
 * filter each adapt their request to a {@link WebExchange}, start a
 * {@link RouteCall} here, and only send its refusal their own way. The call
 * owns the rest: the limiter calls with their keys and disclosures, the header
 * fields of the outcome, the refusal, the permits of the concurrency caps held
 * and given back, and the settlement of limits counted by outcome.
 * <p>
 * A caller that must never block (an event loop) gets every step that could
 * block as a stage ({@link RouteCall#resume}); one that may block decides
 * inline.
 */
public final class RouteLimits {

	/** How {@link #decide} names the key it is given, for the visibility rule: the caller's. */
	private static final String GIVEN_KEY = "given";

	final RateLimiter limiter;

	final @Nullable RoutePermits permits;

	final KeyExpressions expressions;

	final RateLimitHeaders headers;

	/**
	 * Creates the route limits.
	 * @param limiter decides the rate limits and budgets
	 * @param concurrency hands out the permits of concurrency caps; {@code null} when no route has one
	 * @param expressions evaluates keys
	 * @param headers writes the header fields
	 */
	public RouteLimits(RateLimiter limiter, @Nullable ConcurrencyLimiter concurrency, KeyExpressions expressions,
			RateLimitHeaders headers) {
		this.limiter = limiter;
		this.permits = (concurrency != null) ? new RoutePermits(concurrency) : null;
		this.expressions = expressions;
		this.headers = headers;
	}

	/**
	 * Checks that these limits can apply route rules: a rule with a
	 * concurrency cap needs a {@link ConcurrencyLimiter}.
	 * @param routes the rules
	 * @throws IllegalArgumentException when a rule has a cap but there is no limiter for it
	 */
	public void check(List<RouteRule> routes) {
		if (this.permits == null && routes.stream().anyMatch((route) -> !route.caps().isEmpty())) {
			throw new IllegalArgumentException("A route rule has a concurrency cap but no ConcurrencyLimiter is given");
		}
	}

	/**
	 * Starts applying limits to a request; nothing is decided until the call
	 * {@linkplain RouteCall#advance advances}.
	 * @param exchange the request
	 * @param limits the policies and caps, each once, in order
	 * @param threads where a caller that must never block does what would block; {@code null} for a caller
	 * that may block, which decides inline
	 * @return the call
	 */
	public RouteCall call(WebExchange exchange, MatchedLimits limits, @Nullable DecisionThreads threads) {
		if (!limits.caps().isEmpty() && this.permits == null) {
			throw new IllegalStateException("A route rule has a concurrency cap but no ConcurrencyLimiter is given");
		}
		return new RouteCall(this, exchange, limits, threads);
	}

	/**
	 * Decides policies for a key given by someone else, without the request
	 * (Spring Cloud Gateway's {@code RequestRateLimiter}, whose key resolver
	 * gives the key): the same decision, and the header fields a response would
	 * carry, {@code Retry-After} included when refused. The key is taken for the
	 * caller's: a policy of visibility {@code auto} is told about.
	 * @param policies the policies, each once, in order
	 * @param key the caller's key
	 * @param threads where a store call that can only block runs, and a wait waits
	 * @param refusals describes a refusal's fields
	 * @return the verdict
	 */
	public CompletionStage<Verdict> decide(List<BoundPolicy> policies, String key, DecisionThreads threads,
			Refusals refusals) {
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
		return AsyncCalls.started(() -> this.limiter.acquireAsync(calls, threads)).handle((outcome, failure) -> {
			RateLimitException refusal;
			if (failure != null) {
				RuntimeException cause = AsyncCalls.cause(failure);
				if (!(cause instanceof RateLimitException refused)) {
					throw cause;
				}
				refusal = refused;
			}
			else {
				this.headers.record(disclosures, fields, Verdict.FIELDS, outcome);
				if (outcome.allowed()) {
					return new Verdict(true, fields);
				}
				refusal = new RateLimitExceededException(outcome);
			}
			RefusalFields.write(refusals.describe(disclosures, refusal), fields, Verdict.FIELDS);
			return new Verdict(false, fields);
		});
	}

	/**
	 * The verdict on a call decided by {@link #decide}.
	 *
	 * @param allowed whether the call may go on
	 * @param headers the header fields to answer with, in order
	 */
	public record Verdict(boolean allowed, Map<String, String> headers) {

		/** Writes a verdict's fields. */
		private static final HeaderWriter<Map<String, String>> FIELDS = Map::put;

	}

}

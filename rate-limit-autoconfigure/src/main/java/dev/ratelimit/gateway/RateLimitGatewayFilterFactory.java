package dev.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.annotation.RegisterReflectionForBinding;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.cloud.gateway.support.HasRouteId;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.web.MatchedLimits;
import dev.ratelimit.web.reactive.ReactiveRouteLimits;

/**
 * The gateway filter {@code RateLimit}: applies named policies of
 * {@code rate-limit.policies} to a Spring Cloud Gateway route, with the same
 * decision, keys, header fields, disclosure, counting by outcome and refusal
 * (429 or 503, RFC 9457 problem, {@code Retry-After}) as a route rule of
 * {@code rate-limit.routes} ({@link ReactiveRouteLimits} does both).
 * <pre>
 * filters:
 *   - RateLimit=per-ip,per-user          # shortcut: the policy names (at most 16)
 *   - name: RateLimit                    # or the arguments by name
 *     args:
 *       policies: login-attempts
 *       count-on: 401
 * </pre>
 * The gateway creates and binds each route's {@link Config} reflectively; it
 * registers hints for its own filters' arguments only, so this bean registers
 * those of its own for a native image.
 */
@RegisterReflectionForBinding(RateLimitGatewayFilterFactory.Config.class)
public class RateLimitGatewayFilterFactory extends AbstractGatewayFilterFactory<RateLimitGatewayFilterFactory.Config> {

	/** The filter's name in route definitions. */
	public static final String NAME = "RateLimit";

	/** How many policy names the shortcut form takes; the arguments by name take any number. */
	public static final int MAX_SHORTCUT_POLICIES = 16;

	/** {@code policies[0]} to {@code policies[15]}: the names a shortcut may list. */
	private static final List<String> SHORTCUT_FIELDS = IntStream.range(0, MAX_SHORTCUT_POLICIES)
		.mapToObj((i) -> "policies[" + i + "]")
		.toList();

	private final RoutePolicies routePolicies;

	private final ReactiveRouteLimits limits;

	/**
	 * Creates the factory.
	 * @param routePolicies binds the policy names
	 * @param limits applies the policies to a request
	 */
	public RateLimitGatewayFilterFactory(RoutePolicies routePolicies, ReactiveRouteLimits limits) {
		super(Config.class);
		this.routePolicies = routePolicies;
		this.limits = limits;
	}

	@Override
	public String name() {
		return NAME;
	}

	/**
	 * The shortcut's names in order, {@code RateLimit=a,b} as {@code policies[0]=a},
	 * {@code policies[1]=b}: the default shortcut type, so that the arguments by
	 * name ({@code policies}, {@code count-on}) bind as they are, which the
	 * gateway's list type would gather into one list.
	 */
	@Override
	public List<String> shortcutFieldOrder() {
		return SHORTCUT_FIELDS;
	}

	@Override
	public GatewayFilter apply(Config config) {
		// A filter of the Java DSL built by apply(consumer) has no route id: its arguments are named by the filter.
		String route = (config.getRouteId() != null) ? "route '" + config.getRouteId() + "' " : "";
		return new RateLimitGatewayFilter(limits(config, route + "filter " + NAME + "."), this.limits);
	}

	/**
	 * Binds a route's policies and caps, as a route rule's, failing with a
	 * message that names the argument.
	 * @param config the filter's arguments
	 * @param prefix names the arguments in errors, ending with a dot
	 * @return the policies and caps, in order
	 */
	MatchedLimits limits(Config config, String prefix) {
		List<AppliedLimit<ConcurrencyPolicy>> caps = this.routePolicies.caps(prefix, config.getConcurrency());
		// A route limits with policies, caps or both; with caps only, it names no policy.
		List<BoundPolicy> policies = (caps.isEmpty() || !config.getPolicies().isEmpty())
				? this.routePolicies.bind(prefix, config.getPolicies(), config.getCountOn()) : List.of();
		return new MatchedLimits(policies, caps);
	}

	/**
	 * The filter's arguments.
	 */
	public static class Config implements HasRouteId {

		private List<String> policies = new ArrayList<>();

		private List<Integer> countOn = new ArrayList<>();

		private List<String> concurrency = new ArrayList<>();

		private @Nullable String routeId;

		/** @return the names of the policies to apply, in order */
		public List<String> getPolicies() {
			return this.policies;
		}

		/** @param policies the names of the policies to apply, in order */
		public void setPolicies(List<String> policies) {
			this.policies = policies;
		}

		/** @return the statuses that count against the policies; empty for every status */
		public List<Integer> getCountOn() {
			return this.countOn;
		}

		/** @param countOn the statuses that count against the policies; empty for every status */
		public void setCountOn(List<Integer> countOn) {
			this.countOn = countOn;
		}

		/** @return the names of the concurrency caps a request holds a permit of until it is served */
		public List<String> getConcurrency() {
			return this.concurrency;
		}

		/** @param concurrency the names of the concurrency caps a request holds a permit of until it is served */
		public void setConcurrency(List<String> concurrency) {
			this.concurrency = concurrency;
		}

		@Override
		public void setRouteId(String routeId) {
			this.routeId = routeId;
		}

		@Override
		public @Nullable String getRouteId() {
			return this.routeId;
		}

	}

}

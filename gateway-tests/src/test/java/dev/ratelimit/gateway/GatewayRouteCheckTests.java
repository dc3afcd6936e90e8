package dev.ratelimit.gateway;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.NestedExceptionUtils;

import dev.ratelimit.core.RateLimitConfigurationException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A gateway route that names a policy not configured, or none, fails the
 * application's start with the argument's property name, as a route rule does:
 * for the {@code RateLimit} filter and for {@code RequestRateLimiter} deciding
 * with the starter's limiter (the gateway itself would only log the route).
 */
class GatewayRouteCheckTests {

	private static final String ROUTE = "spring.cloud.gateway.server.webflux.routes[0].";

	@Test
	void aRateLimitFilterNamingAnUnknownPolicyFailsTheStart() {
		assertThat(startFailure(ROUTE + "filters[0]=RateLimit=per-ip,per-tenant"))
			.hasMessageStartingWith("Property " + ROUTE + "filters[0].args.policies with value 'per-tenant' is invalid: "
					+ "no policy named 'per-tenant' is configured (configured: ")
			.hasMessageContaining("per-ip");
	}

	@Test
	void aRateLimitFilterCountingAShapingPolicyByOutcomeFailsTheStart() {
		assertThat(startFailure(ROUTE + "filters[0].name=RateLimit", ROUTE + "filters[0].args.policies=queue",
				ROUTE + "filters[0].args.count-on=401"))
			.hasMessageStartingWith("Property " + ROUTE + "filters[0].args.count-on with value '[401]' is invalid: "
					+ "counts requests by outcome, which policy 'queue' cannot");
	}

	@Test
	void requestRateLimiterNamingAnUnknownPolicyFailsTheStart() {
		assertThat(startFailure(ROUTE + "filters[0].name=RequestRateLimiter",
				ROUTE + "filters[0].args.rate-limiter=#{@rateLimitGatewayLimiter}",
				ROUTE + "filters[0].args.rate-limit.policies=per-user"))
			.hasMessageStartingWith("Property " + ROUTE + "filters[0].args.rate-limit.policies with value 'per-user' "
					+ "is invalid: no policy named 'per-user' is configured");
	}

	@Test
	void requestRateLimiterWithTheStartersLimiterAndNoPolicyFailsTheStart() {
		assertThat(startFailure(ROUTE + "filters[0].name=RequestRateLimiter",
				ROUTE + "filters[0].args.rate-limiter=#{@rateLimitGatewayLimiter}"))
			.hasMessageStartingWith("Property " + ROUTE + "filters[0].args.rate-limit.policies with value '[]' is "
					+ "invalid: list at least one policy name");
	}

	private static Throwable startFailure(String... filter) {
		Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(App.class)
			.web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "rate-limit.policies.per-ip.capacity=5", "rate-limit.policies.per-ip.refill=5/1s",
					"rate-limit.policies.queue.algorithm=leaky-bucket-shaping", "rate-limit.policies.queue.capacity=2",
					"rate-limit.policies.queue.refill=1/1s", ROUTE + "id=orders", ROUTE + "uri=http://127.0.0.1:9",
					ROUTE + "predicates[0]=Path=/orders/**")
			.properties(filter)
			.run()
			.close());
		assertThat(failure).isNotNull();
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(failure);
		assertThat(cause).isInstanceOf(RateLimitConfigurationException.class);
		return cause;
	}

	/** A gateway this class and others start and close: on event loops of its own. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OwnEventLoops.class)
	static class App {

		@Bean
		KeyResolver userKeyResolver() {
			return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-User"));
		}

	}

}

package dev.ratelimit.gateway;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.annotation.ReflectiveRuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The arguments of the {@code RateLimit} filter and of the
 * {@code RequestRateLimiter} limiter can be created and bound in a native
 * image: Spring's AOT processing of the two beans registers them, as it does
 * for any bean (the gateway registers hints for its own filters only).
 */
class GatewayRuntimeHintsTests {

	@Test
	void theArgumentsOfTheFilterAndTheLimiterCanBeBound() throws Exception {
		RuntimeHints hints = new RuntimeHints();
		new ReflectiveRuntimeHintsRegistrar().registerRuntimeHints(hints, RateLimitGatewayFilterFactory.class,
				RateLimitGatewayLimiter.class);
		for (Class<?> config : List.of(RateLimitGatewayFilterFactory.Config.class, RateLimitGatewayLimiter.Config.class)) {
			assertThat(RuntimeHintsPredicates.reflection().onConstructorInvocation(config.getDeclaredConstructor()))
				.as(config.getName())
				.accepts(hints);
			List<Method> properties = Arrays.stream(config.getDeclaredMethods())
				.filter((method) -> Modifier.isPublic(method.getModifiers())
						&& (method.getName().startsWith("get") || method.getName().startsWith("set")))
				.toList();
			assertThat(properties).extracting(Method::getName).contains("getPolicies", "setPolicies");
			for (Method property : properties) {
				assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(property)).as(property.toString())
					.accepts(hints);
			}
		}
	}

}

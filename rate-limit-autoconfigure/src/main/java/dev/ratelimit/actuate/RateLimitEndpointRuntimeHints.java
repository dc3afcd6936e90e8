package dev.ratelimit.actuate;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.util.ClassUtils;

/**
 * Registers the {@code ratelimits} endpoint's responses for binding, so that
 * the actuator's JSON writer can read their components in a native image.
 * Spring Boot registers the declared return type of each operation, which
 * leaves out what the web extension returns (declared as
 * {@code WebEndpointResponse<Object>}) and the records behind the
 * {@link RateLimitEndpoint.KeyState} interface: every response record is
 * registered here, each implementation of {@code KeyState} included, as the
 * sealed interface lists them. Nothing is registered without the actuator.
 */
class RateLimitEndpointRuntimeHints implements RuntimeHintsRegistrar {

	private static final String ENDPOINT = "org.springframework.boot.actuate.endpoint.annotation.Endpoint";

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		if (!ClassUtils.isPresent(ENDPOINT, classLoader)) {
			return;
		}
		new BindingReflectionHintsRegistrar().registerReflectionHints(hints.reflection(), responses());
	}

	/** The records the endpoint answers with; the records they hold are registered through them. */
	static Type[] responses() {
		List<Type> types = new ArrayList<>(List.of(RateLimitEndpoint.PoliciesDescriptor.class,
				RateLimitEndpoint.KeyState.class, RateLimitEndpoint.ResetDescriptor.class,
				RateLimitEndpoint.OverridesDescriptor.class));
		Class<?>[] states = RateLimitEndpoint.KeyState.class.getPermittedSubclasses();
		types.addAll(List.of((states != null) ? states : new Class<?>[0]));
		return types.toArray(Type[]::new);
	}

}

package dev.ratelimit.autoconfigure;

import java.lang.annotation.Annotation;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.RateLimits;
import dev.ratelimit.key.KeyContext;

/**
 * The run-time hints the starter needs in a native image (or any AOT-processed
 * application), registered through {@code META-INF/spring/aot.factories}:
 * <ul>
 * <li>The Lua scripts and function library ({@code META-INF/scripts/*.lua}):
 * {@code LuaScripts} reads them from the class path when the Redis backend
 * starts, and a native image holds only the resources it was told of.</li>
 * <li>{@link KeyContext}'s public methods, for invocation: it is the root object
 * of every key, cost, plan, exemption and {@code countWhen} expression, and SpEL
 * finds and calls {@code header('…')}, {@code ip}, {@code principal} and
 * {@code global} reflectively.</li>
 * <li>The limit annotations' attribute methods (all public), for invocation:
 * Spring's annotation support reads attributes, and the annotations held by
 * the container of repeated ones, by calling them reflectively.</li>
 * <li>A JDK proxy for each limit annotation with {@code @AliasFor} attributes:
 * Spring synthesizes such annotations, and any found as a meta-annotation, as a
 * proxy of the annotation type.</li>
 * <li>The classes whose presence the starter checks by name at run time
 * ({@code ClassUtils.isPresent}), each only when present while the image is
 * built: a native image finds by name only the classes registered for
 * reflection, and would otherwise take each for absent.</li>
 * </ul>
 * The annotated methods themselves (their invocation, fallbacks and the types
 * their expressions read) are registered per bean by
 * {@link dev.ratelimit.aop.LimitedMethodReflectiveProcessor}, the actuator
 * endpoint's responses by {@code RateLimitEndpointRuntimeHints}.
 */
class RateLimitRuntimeHints implements RuntimeHintsRegistrar {

	/** Where {@code LuaScripts} reads the scripts and the function library from. */
	static final String SCRIPTS = "META-INF/scripts/*.lua";

	/** The limit annotations and their containers, whose attributes Spring reads reflectively. */
	static final List<Class<? extends Annotation>> ANNOTATIONS = List.of(RateLimited.class, RateLimits.class,
			CostBudget.class, CostBudget.List.class, Concurrency.class);

	/** The limit annotations Spring synthesizes as proxies: those with {@code @AliasFor} attributes. */
	static final List<Class<? extends Annotation>> SYNTHESIZED = List.of(RateLimited.class, CostBudget.class,
			Concurrency.class);

	/**
	 * The classes the starter looks for by name while it runs: each decides
	 * how a call or a store is handled (a Reactor or MVC streaming result, a
	 * client that went away, Lettuce or Jedis, Reactor Netty, Spring Security,
	 * the actuator's web endpoints, the provider clients' RestClient).
	 */
	static final List<String> LOOKED_UP = List.of(
			"org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter",
			"org.springframework.web.util.DisconnectedClientHelper", "reactor.core.publisher.Mono",
			"io.lettuce.core.RedisClient", "redis.clients.jedis.Jedis", "reactor.netty.Connection",
			"org.springframework.security.core.Authentication",
			"org.springframework.security.web.SecurityFilterChain",
			"org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration",
			"org.springframework.web.client.RestClient");

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerPattern(SCRIPTS);
		hints.reflection().registerType(KeyContext.class, MemberCategory.INVOKE_PUBLIC_METHODS);
		for (Class<? extends Annotation> annotation : ANNOTATIONS) {
			hints.reflection().registerType(annotation, MemberCategory.INVOKE_PUBLIC_METHODS);
		}
		for (Class<? extends Annotation> annotation : SYNTHESIZED) {
			hints.proxies().registerJdkProxy(annotation);
		}
		for (String name : LOOKED_UP) {
			hints.reflection().registerTypeIfPresent(classLoader, name);
		}
	}

}

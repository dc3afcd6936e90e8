package dev.ratelimit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;
import org.springframework.core.annotation.AliasFor;

import dev.ratelimit.aop.LimitedMethodReflectiveProcessor;

/**
 * Caps the calls of a Spring bean method in flight: at most {@link #permits()}
 * at once per key, in this instance or across all instances
 * ({@code scope = "distributed"}, through Redis). A caller waits up to
 * {@link #maxWait()} for a permit, then is rejected with
 * {@link dev.ratelimit.concurrency.ConcurrencyLimitExceededException} (in a web
 * request 429, or 503 for a cap the caller may not see or one protecting a
 * shared downstream), or its {@link #fallback()}
 * is called. The permit is released when
 * the method returns or throws, or when its asynchronous result
 * ({@link java.util.concurrent.CompletionStage}, {@code Callable},
 * {@code DeferredResult}, {@code WebAsyncTask}) completes. Every attribute
 * accepts {@code ${...}} placeholders.
 *
 * <pre class="code">
 * &#64;Concurrency(policy = "provider", permits = "4", maxWait = "2s")
 * Reply complete(ChatRequest request) { ... }
 * </pre>
 *
 * Rate is not concurrency: a requests-per-second limit does not stop fifty slow
 * calls from being in flight at once.
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Reflective(LimitedMethodReflectiveProcessor.class)
public @interface Concurrency {

	/**
	 * Alias for {@link #policy()}.
	 * @return the policy name
	 */
	@AliasFor("policy")
	String value() default "";

	/**
	 * Name of the policy. Without inline {@link #permits()} it must be configured
	 * under {@code rate-limit.concurrency}; with them it names the inline policy
	 * (default {@code ClassName.methodName}).
	 * @return the policy name
	 */
	@AliasFor("value")
	String policy() default "";

	/**
	 * Inline policy: the most calls in flight per key.
	 * @return the permits, a positive whole number
	 */
	String permits() default "";

	/**
	 * Key expression overriding the policy's; empty means the policy's
	 * ({@code global} for inline policies).
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * How long a caller waits for a permit, for example {@code 2s}; overrides the
	 * policy's. Empty keeps it (0 for inline policies: reject at once).
	 * @return the bound
	 */
	String maxWait() default "";

	/**
	 * Inline policy: {@code local} (this instance) or {@code distributed} (every
	 * instance, through Redis).
	 * @return the scope
	 */
	String scope() default "";

	/**
	 * Whether the cap is named to callers in refusals: {@code auto} (when keyed by
	 * the caller and on the request's handler method), {@code public} or
	 * {@code internal}. Overrides the policy's {@code visibility}; empty keeps it
	 * ({@code auto} for inline caps).
	 * @return the visibility
	 */
	String visibility() default "";

	/**
	 * Name of a method of the same bean to call instead of throwing when this
	 * method's own limits refuse the call (see {@link RateLimited#fallback()},
	 * which all three annotations share). Empty: the refusal is thrown.
	 * @return the fallback method's name
	 */
	String fallback() default "";

}

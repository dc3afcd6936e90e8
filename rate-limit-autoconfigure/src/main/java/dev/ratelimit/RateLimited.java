package dev.ratelimit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;
import org.springframework.core.annotation.AliasFor;

import dev.ratelimit.aop.LimitedMethodReflectiveProcessor;

/**
 * Limits calls to a Spring bean method (a controller handler or any other bean)
 * with a rate-limit policy. The policy is either named, configured under
 * {@code rate-limit.policies.<name>}, or defined inline with {@link #capacity()}
 * and {@link #refill()}. Every attribute accepts {@code ${...}} placeholders.
 * <p>
 * Repeat the annotation to apply several policies to one method (for example a
 * global limit and a per-user one); the call is allowed only when all allow it.
 * <p>
 * A denied call throws {@link dev.ratelimit.core.RateLimitExceededException};
 * in a web request it becomes a {@code 429} response with {@code Retry-After}
 * ({@code 503} when the caller may not see the policy).
 * A method naming a {@link #fallback()} gets the fallback's value instead.
 *
 * <pre class="code">
 * &#64;RateLimited("agent-runs")
 * &#64;RateLimited(capacity = "100", refill = "100/1m", key = "ip")
 * &#64;PostMapping("/agent/run")
 * Run run(&#64;RequestHeader("X-User-Id") String user) { ... }
 * </pre>
 *
 * The annotated method must be public and called through the Spring proxy (not
 * from inside its own class), as with any Spring AOP annotation.
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimits.class)
@Reflective(LimitedMethodReflectiveProcessor.class)
public @interface RateLimited {

	/**
	 * Alias for {@link #policy()}.
	 * @return the policy name
	 */
	@AliasFor("policy")
	String value() default "";

	/**
	 * Name of the policy. With no inline {@link #capacity()} it must name a policy
	 * configured under {@code rate-limit.policies}; with one it names the inline
	 * policy (default: {@code ClassName.methodName}).
	 * @return the policy name
	 */
	@AliasFor("value")
	String policy() default "";

	/**
	 * Inline policy: the algorithm, {@code token-bucket} (default),
	 * {@code fixed-window}, {@code sliding-window-log},
	 * {@code sliding-window-counter}, {@code leaky-bucket} or
	 * {@code leaky-bucket-shaping}.
	 * @return the algorithm
	 */
	String algorithm() default "";

	/**
	 * Inline policy: the capacity, i.e. the largest burst (buckets) or the limit
	 * per window. Setting it makes this annotation define its own policy.
	 * @return the capacity, a positive whole number
	 */
	String capacity() default "";

	/**
	 * Inline policy of a bucket algorithm: the refill rate as
	 * {@code tokens/period}, for example {@code 10/1s}.
	 * @return the refill rate
	 */
	String refill() default "";

	/**
	 * Inline policy of a window algorithm: the window, for example {@code 1s},
	 * {@code 1m} or {@code 1d}.
	 * @return the window
	 */
	String window() default "";

	/**
	 * Wait mode: how long a caller over the limit waits for its turn instead of
	 * being rejected, for example {@code 2s} (token and leaky buckets). Overrides
	 * the policy's {@code max-wait}; empty keeps it.
	 * @return the bound
	 */
	String maxWait() default "";

	/**
	 * Key expression overriding the policy's: SpEL over the method arguments
	 * ({@code #tenant}, {@code #p0}), the request ({@code #request}) and the
	 * built-in resolvers {@code ip}, {@code principal}, {@code global} and
	 * {@code header('Name')}. Empty means the policy's key.
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * Units each call takes: a whole number, or SpEL over the arguments such as
	 * {@code #items.size()}.
	 * @return the cost expression
	 */
	String cost() default "1";

	/**
	 * Counting by outcome: a SpEL expression, evaluated once the call has ended
	 * (for an asynchronous result, when it completes), that yields {@code true}
	 * when the call counts against the policy. It sees {@code #result} (the return
	 * value, {@code null} after an exception), {@code #exception} (what the method
	 * threw, {@code null} after a return) and the method's arguments. The units
	 * are taken before the call, so that a caller over the limit is refused before
	 * the method runs, and given back after it when the expression yields
	 * {@code false}. Brute-force protection counts only failed logins:
	 * {@code countWhen = "#exception != null"} or {@code "!#result.ok"}.
	 * <p>
	 * Empty (the default) counts every call. An expression that cannot be
	 * evaluated counts the call. Policies that cannot give units back exactly
	 * (the shaping leaky bucket, wait mode, prefetch, shadow) are refused at
	 * start-up.
	 * @return the expression
	 */
	String countWhen() default "";

	/**
	 * Whether the policy is told to callers in the RateLimit header fields and
	 * named in refusals: {@code auto} (when keyed by the caller and on the
	 * request's handler method), {@code public} or {@code internal}. Overrides the
	 * policy's {@code visibility}; empty keeps it ({@code auto} for inline
	 * policies).
	 * @return the visibility
	 */
	String visibility() default "";

	/**
	 * Name of a method of the same bean to call, with the same arguments, instead
	 * of throwing when this method's own limits refuse the call: a refusal of any
	 * of its rate limits, budgets or concurrency cap before the method runs
	 * (exceeded, the store unavailable for a fail-closed limit, a missing key, an
	 * invalid cost). A refusal thrown by the method itself, or by a limited
	 * method it calls, is not one and is thrown as usual. The fallback is not
	 * limited or charged; a call refused this way reserved nothing.
	 * <p>
	 * It may have any visibility and must take the method's parameters (each of
	 * the same type or a supertype), optionally followed by one parameter
	 * receiving the refusal, a {@link dev.ratelimit.core.RateLimitException} or a
	 * subtype (a refusal it cannot take is thrown), and return a type the method
	 * may return. Among overloads, the one with the most specific refusal
	 * parameter that takes the refusal is called. Several annotations on one
	 * method naming a fallback must name the same one; one is enough. Checked at
	 * start-up.
	 * @return the fallback method's name, empty to throw the refusal
	 */
	String fallback() default "";

}

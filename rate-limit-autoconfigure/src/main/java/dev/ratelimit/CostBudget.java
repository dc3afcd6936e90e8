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
 * Charges a Spring bean method's cost to a budget configured under
 * {@code rate-limit.budgets.<name>}: before the call the {@link #estimate()} is
 * reserved, atomically; if what is spent and reserved plus the estimate would
 * exceed the budget, the method does not run and
 * {@link dev.ratelimit.budget.BudgetExceededException} is thrown (429 in a web
 * request, 503 when the caller may not see the budget), or its {@link #fallback()} is called. After the call the reservation is settled to the {@link #actual()}
 * cost, refunding or charging the difference. Every attribute accepts
 * {@code ${...}} placeholders.
 *
 * <pre class="code">
 * &#64;CostBudget(value = "tenant-daily", key = "#tenant",
 *         estimate = "#request.maxTokens * 0.000002", actual = "#result.usage.costUsd")
 * Reply chat(String tenant, ChatRequest request) { ... }
 * </pre>
 *
 * When the method throws, the actual expression is evaluated with
 * {@code #exception} set and {@code #result} null; if it yields no amount, the
 * budget's {@code on-error} rule applies: {@code keep} charges the estimate,
 * {@code release} charges nothing. Methods returning a
 * {@link java.util.concurrent.CompletionStage} are settled when it completes,
 * and streams ({@code SseEmitter}, {@code ResponseBodyEmitter},
 * {@code StreamingResponseBody}, Reactor's {@code Flux}) when they end; a stream
 * reports its usage as it goes through {@link dev.ratelimit.budget.BudgetMeter#current()}
 * and is then charged what it reported.
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(CostBudget.List.class)
@Reflective(LimitedMethodReflectiveProcessor.class)
public @interface CostBudget {

	/**
	 * Alias for {@link #policy()}.
	 * @return the budget name
	 */
	@AliasFor("policy")
	String value() default "";

	/**
	 * Name of the budget, configured under {@code rate-limit.budgets}.
	 * @return the budget name
	 */
	@AliasFor("value")
	String policy() default "";

	/**
	 * Key expression overriding the budget's: whose budget the call is charged
	 * to, SpEL over the arguments ({@code #tenant}) and the request.
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * The amount to reserve before the call, in the budget's unit: SpEL over the
	 * arguments yielding a number, for example {@code #request.maxTokens * 0.000002}.
	 * Rounded up to the next micro-unit.
	 * @return the estimate expression
	 */
	String estimate();

	/**
	 * The actual cost, evaluated after the call: SpEL over {@code #result} (and
	 * the arguments; {@code #exception} when the call threw). Empty charges the
	 * estimate.
	 * @return the actual cost expression
	 */
	String actual() default "";

	/**
	 * What a stream reporting its usage through
	 * {@link dev.ratelimit.budget.BudgetMeter} does when that usage would pass
	 * its reservation: {@code stop} at the reservation, or {@code extend} it
	 * while the budget allows. Overrides the budget's {@code on-overrun}; empty
	 * keeps it.
	 * @return the overrun rule
	 */
	String onOverrun() default "";

	/**
	 * Whether the budget is told to callers in the {@code Budget-Remaining} field
	 * and named in refusals: {@code auto} (when keyed by the caller and on the
	 * request's handler method), {@code public} or {@code internal}. Overrides
	 * the budget's {@code visibility}; empty keeps it.
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

	/**
	 * Container of repeated {@link CostBudget} annotations.
	 */
	@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@Reflective(LimitedMethodReflectiveProcessor.class)
	@interface List {

		/**
		 * The repeated annotations.
		 * @return the annotations
		 */
		CostBudget[] value();

	}

}

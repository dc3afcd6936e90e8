package dev.ratelimit.key;

import java.util.function.Consumer;
import java.util.function.UnaryOperator;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import dev.ratelimit.core.Exemption;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LiveLimit;
import dev.ratelimit.core.PolicyValidationException;

/**
 * A limit of any kind as applied at one place (an annotated method, a route,
 * the programmatic API): the {@link LiveLimit} with what the place changes
 * (an annotation's key, visibility or max-wait), its expressions parsed. Per
 * call it says whether the call is exempt and which variant decides it (a
 * listed key's override, the caller's plan, or the default plan), reading the
 * live definition each time, so that a refresh or a run-time override applies
 * to the next call. The same for rate limits, budgets and concurrency caps.
 *
 * @param <L> the kind of limit
 */
public final class AppliedLimit<L extends Limit> {

	private static final Log logger = LogFactory.getLog(AppliedLimit.class);

	private final LiveLimit<L> live;

	private final UnaryOperator<L> local;

	private final @Nullable String keyOverride;

	private final KeyExpressions expressions;

	private final Consumer<LimitDefinition<L>> check;

	private volatile Parsed<L> parsed;

	/** Warns once when the key keeps coming out missing here. */
	private final MissingKeys missingKeys = new MissingKeys();

	/**
	 * Applies a live limit at a place.
	 * @param live the limit
	 * @param local what the place changes on the limit, applied to every variant
	 * @param keyOverride the key expression of this place when it is not the limit's own, or {@code null}
	 * @param expressions the expression parser and evaluator
	 * @throws PolicyValidationException if what the place changes is refused
	 * @throws org.springframework.expression.ParseException if an expression cannot be parsed
	 */
	public AppliedLimit(LiveLimit<L> live, UnaryOperator<L> local, @Nullable String keyOverride,
			KeyExpressions expressions) {
		this(live, local, keyOverride, expressions, (definition) -> {
		});
	}

	/**
	 * Applies a live limit at a place that needs every variant to fit it (a fixed
	 * cost within every capacity, say): a change that does not fit is refused at
	 * this place, which keeps deciding with the definition it had.
	 * @param live the limit
	 * @param local what the place changes on the limit, applied to every variant
	 * @param keyOverride the key expression of this place when it is not the limit's own, or {@code null}
	 * @param expressions the expression parser and evaluator
	 * @param check throws {@link PolicyValidationException} for a definition the place cannot use
	 * @throws PolicyValidationException if what the place changes, or the limit as it is, does not fit
	 */
	public AppliedLimit(LiveLimit<L> live, UnaryOperator<L> local, @Nullable String keyOverride,
			KeyExpressions expressions, Consumer<LimitDefinition<L>> check) {
		this.live = live;
		this.local = local;
		this.keyOverride = keyOverride;
		this.expressions = expressions;
		this.check = check;
		this.parsed = parse(live.current());
	}

	/**
	 * Applies a live limit as it is, with its own key.
	 * @param <L> the kind
	 * @param live the limit
	 * @param expressions the expression parser and evaluator
	 * @return the applied limit
	 */
	public static <L extends Limit> AppliedLimit<L> of(LiveLimit<L> live, KeyExpressions expressions) {
		return new AppliedLimit<>(live, UnaryOperator.identity(), null, expressions);
	}

	/** @return the limit as it applies here now (name, key, visibility and the numbers of callers without a plan) */
	public L limit() {
		return current().definition.limit();
	}

	/** @return the definition as it applies here now */
	public LimitDefinition<L> definition() {
		return current().definition;
	}

	/** @return the key expression in force here */
	public Expression key() {
		return current().key;
	}

	/**
	 * Returns whether a call is exempt from the limit: its client address in an
	 * exempt range, its caller in an exempt role, or the exempt condition true.
	 * A condition that cannot be evaluated does not exempt: the limit applies.
	 * @param context the call's evaluation context
	 * @return whether the limit does not apply to the call
	 */
	public boolean exempt(EvaluationContext context) {
		Parsed<L> now = current();
		Exemption exemption = now.definition.exemption();
		if (exemption.isNone()) {
			return false;
		}
		KeyContext keys = KeyExpressions.keys(context);
		KeyRequest request = (keys != null) ? keys.request() : null;
		if (request != null) {
			if (!exemption.cidrs().isEmpty() && exemption.covers(request.clientAddress())) {
				return true;
			}
			for (String role : exemption.roles()) {
				if (request.isUserInRole(role)) {
					return true;
				}
			}
		}
		return now.exemptWhen != null && this.expressions.condition(now.exemptWhen, context);
	}

	/**
	 * Returns the variant that decides a call: the key's override, else the
	 * caller's plan, else the default plan; a plan expression that fails or names
	 * no plan counts as the default plan, reported to the listener.
	 * @param key the call's key value, or {@code null}
	 * @param context the call's evaluation context
	 * @return the variant
	 */
	public L select(@Nullable String key, EvaluationContext context) {
		Parsed<L> now = current();
		LimitDefinition<L> definition = now.definition;
		if (definition.isPlain()) {
			return definition.limit();
		}
		L listed = definition.keyOverride(key);
		if (listed != null) {
			// A listed key's numbers win over any plan: its plan is not looked up, nor counted as defaulted.
			return listed;
		}
		String plan = null;
		if (now.plan != null) {
			plan = this.expressions.plan(now.plan, context, definition);
		}
		return definition.select(plan, key);
	}

	/**
	 * Resolves a call in the one order every kind follows: whether it is exempt,
	 * then its key, then the variant (key override or plan) that decides it.
	 * @param context the call's evaluation context
	 * @return the call's key and limit, or {@code null} when the call is exempt
	 */
	public @Nullable Resolved<L> resolve(EvaluationContext context) {
		if (exempt(context)) {
			return null;
		}
		Expression expression = key();
		String key = this.expressions.key(expression, context);
		L limit = select(key, context);
		this.missingKeys.seen(key, limit, expression, context);
		return new Resolved<>(limit, key);
	}

	/**
	 * A call's key and the variant of the limit that decides it.
	 *
	 * @param <L> the kind of limit
	 * @param limit the variant
	 * @param key the key value, or {@code null} when it could not be resolved
	 */
	public record Resolved<L extends Limit>(L limit, @Nullable String key) {
	}

	private Parsed<L> current() {
		Parsed<L> now = this.parsed;
		LimitDefinition<L> source = this.live.current();
		if (now.source != source) {
			try {
				now = parse(source);
				this.parsed = now;
			}
			catch (RuntimeException ex) {
				// A refresh was checked against the configuration, not against every place: keep deciding as before.
				logger.warn("Limit '" + source.limit().name() + "' could not be applied as changed at one place; "
						+ "that place keeps the previous definition: " + ex.getMessage());
				this.parsed = new Parsed<>(source, now.definition, now.key, now.plan, now.exemptWhen);
				now = this.parsed;
			}
		}
		return now;
	}

	private Parsed<L> parse(LimitDefinition<L> source) {
		LimitDefinition<L> definition = source.withLimit(this.local);
		this.check.accept(definition);
		String key = (this.keyOverride != null) ? this.keyOverride : definition.limit().key();
		String plan = definition.planExpression();
		String when = definition.exemption().when();
		return new Parsed<>(source, definition, this.expressions.parse(key),
				(plan != null) ? this.expressions.parse(plan) : null,
				(when != null) ? this.expressions.parse(when) : null);
	}

	/**
	 * A live definition as applied here, with its expressions parsed.
	 */
	private record Parsed<L extends Limit>(LimitDefinition<L> source, LimitDefinition<L> definition, Expression key,
			@Nullable Expression plan, @Nullable Expression exemptWhen) {
	}

}

package dev.ratelimit.key;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;

import dev.ratelimit.core.InvalidCostException;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LimitListener;

/**
 * Parses and evaluates the SpEL expressions of keys and costs. Each distinct
 * expression is parsed once, at start-up, and cached; evaluation builds a
 * small context per call, and only when an expression needs one (built-in keys
 * are read without it).
 */
public final class KeyExpressions implements AopInfrastructureBean {

	private static final Log logger = LogFactory.getLog(KeyExpressions.class);

	private final SpelExpressionParser parser = new SpelExpressionParser();

	private final Map<String, Expression> cache = new ConcurrentHashMap<>();

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final @Nullable BeanResolver beanResolver;

	private final Map<Method, Boolean> requestParameters = new ConcurrentHashMap<>();

	private final LimitListener listener;

	/**
	 * Creates an evaluator that reports to no listener.
	 * @param beanResolver resolves {@code @beanName} references, may be {@code null}
	 */
	public KeyExpressions(@Nullable BeanResolver beanResolver) {
		this(beanResolver, LimitListener.NONE);
	}

	/**
	 * Creates an evaluator.
	 * @param beanResolver resolves {@code @beanName} references, may be {@code null}
	 * @param listener hears of callers decided by the default plan because theirs is missing or unknown
	 */
	public KeyExpressions(@Nullable BeanResolver beanResolver, LimitListener listener) {
		this.beanResolver = beanResolver;
		this.listener = listener;
	}

	/**
	 * Parses an expression, or returns the cached result of an earlier parse.
	 * @param text the expression
	 * @return the parsed expression
	 * @throws ParseException if the text is not valid SpEL
	 */
	public Expression parse(String text) {
		Expression expression = this.cache.get(text);
		if (expression == null) {
			// A built-in key is read by key(...) without SpEL: SpEL is parsed only if something evaluates it.
			BuiltInKeyExpression.Key builtIn = BuiltInKeyExpression.Key.of(text);
			expression = (builtIn != null) ? new BuiltInKeyExpression(builtIn) : this.parser.parseExpression(text);
			this.cache.putIfAbsent(text, expression);
		}
		return expression;
	}

	/**
	 * Returns whether a key expression reads the web request: the built-in
	 * {@code ip} and {@code principal} keys, {@code header(...)}, and
	 * {@code #request}. Such a key comes out missing where a call has no
	 * request in reach.
	 * @param expression the parsed expression
	 * @return whether it reads the request
	 */
	public boolean readsRequest(Expression expression) {
		if (expression instanceof BuiltInKeyExpression builtIn) {
			return builtIn.key() != BuiltInKeyExpression.Key.GLOBAL;
		}
		return expression instanceof SpelExpression spel && readsRequest(spel.getAST());
	}

	private static boolean readsRequest(SpelNode node) {
		if ((node instanceof PropertyOrFieldReference property
				&& (property.getName().equals("ip") || property.getName().equals("principal")))
				|| (node instanceof MethodReference method && method.getName().equals("header"))
				|| (node instanceof VariableReference variable && variable.toStringAST().equals("#request"))) {
			return true;
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			if (readsRequest(node.getChild(i))) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Creates the context to evaluate a method invocation's expressions in. The
	 * SpEL context itself is built on first use: a call whose keys are built-in
	 * and whose limits need no expression never builds it.
	 * @param request the current request, or {@code null}
	 * @param method the invoked method, or {@code null} outside method calls
	 * @param args the arguments, or {@code null}
	 * @return the evaluation context
	 */
	public EvaluationContext context(@Nullable KeyRequest request, @Nullable Method method,
			Object @Nullable [] args) {
		return new LazyEvaluationContext(this, new KeyContext(request), method, args);
	}

	/**
	 * Builds the SpEL context of a call: the key context as root, the method's
	 * arguments as variables, {@code #request} and the bean resolver.
	 */
	EvaluationContext build(KeyContext root, @Nullable Method method, Object @Nullable [] args) {
		KeyRequest request = root.request();
		StandardEvaluationContext context = (method != null)
				? new MethodBasedEvaluationContext(root, method, (args != null) ? args : new Object[0],
						this.parameterNames)
				: new StandardEvaluationContext(root);
		if (request != null && (method == null || !hasRequestParameter(method))) {
			// A method parameter named "request" wins: it is what the annotation's author sees.
			context.setVariable("request", request.nativeRequest());
		}
		if (this.beanResolver != null) {
			context.setBeanResolver(this.beanResolver);
		}
		return context;
	}

	/**
	 * Returns a call's key context without building its SpEL context.
	 * @param context the call's evaluation context
	 * @return the root object when it is a key context, else {@code null}
	 */
	static @Nullable KeyContext keys(EvaluationContext context) {
		if (context instanceof LazyEvaluationContext lazy) {
			return lazy.keys();
		}
		return (context.getRootObject().getValue() instanceof KeyContext keys) ? keys : null;
	}

	private boolean hasRequestParameter(Method method) {
		return this.requestParameters.computeIfAbsent(method, (m) -> {
			String[] names = this.parameterNames.getParameterNames(m);
			return names != null && java.util.Arrays.asList(names).contains("request");
		});
	}

	/**
	 * Evaluates a key expression.
	 * @param expression the expression
	 * @param context the context
	 * @return the key, or {@code null} when the expression yields nothing or fails
	 */
	public @Nullable String key(Expression expression, EvaluationContext context) {
		KeyContext keys = keys(context);
		if (keys != null && expression instanceof BuiltInKeyExpression builtIn) {
			// The built-in keys are read directly: SpEL's reflective property access costs more than the decision.
			return builtIn.key().read(keys);
		}
		try {
			Object value = expression.getValue(context);
			if (value == null) {
				return null;
			}
			String key = value.toString();
			return key.isEmpty() ? null : key;
		}
		catch (RuntimeException ex) {
			// A key that cannot be computed is a missing key: the policy decides, never a 500. SpEL rethrows
			// what a bean method throws as it is (an application's key directory failing), so not only
			// EvaluationException: the same rule as conditions and plans.
			if (logger.isDebugEnabled()) {
				logger.debug("Key expression '" + expression.getExpressionString() + "' failed; treating the key as missing", ex);
			}
			return null;
		}
	}

	/**
	 * Evaluates a condition, such as an exemption's.
	 * @param expression the expression
	 * @param context the context
	 * @return whether it is {@code true}; {@code false} when it fails or is not a boolean
	 */
	public boolean condition(Expression expression, EvaluationContext context) {
		try {
			return Boolean.TRUE.equals(expression.getValue(context, Boolean.class));
		}
		catch (RuntimeException ex) {
			// A condition that cannot be evaluated does not hold: the limit applies, never a 500. SpEL
			// rethrows what a bean method throws as it is, so not only EvaluationException.
			if (logger.isDebugEnabled()) {
				logger.debug("Condition '" + expression.getExpressionString() + "' failed; treating it as false", ex);
			}
			return false;
		}
	}

	/**
	 * Evaluates a plan expression: the caller's plan, or {@code null} (the
	 * default plan) when the expression fails, yields nothing or names no plan of
	 * the limit, which the listener hears of.
	 * @param expression the plan expression
	 * @param context the context
	 * @param definition the limit's definition, with its plans
	 * @return the plan, or {@code null} for the default plan
	 */
	public @Nullable String plan(Expression expression, EvaluationContext context, LimitDefinition<?> definition) {
		// A plan look-up that fails yields nothing, as a key does: the default plan.
		String plan = key(expression, context);
		if (plan == null) {
			this.listener.planDefaulted(definition.limit(), false);
			return null;
		}
		if (!definition.hasPlan(plan)) {
			this.listener.planDefaulted(definition.limit(), true);
			return null;
		}
		return plan;
	}

	/**
	 * Evaluates a cost expression to a whole, non-negative number of units.
	 * @param expression the expression
	 * @param context the context
	 * @param policy the policy name, for messages
	 * @return the cost
	 * @throws InvalidCostException if the value is missing, negative, not a number or not whole
	 */
	public long cost(Expression expression, EvaluationContext context, String policy) {
		Object value;
		try {
			value = expression.getValue(context);
		}
		catch (RuntimeException ex) {
			// What a bean method throws included (SpEL rethrows it as it is): a cost nobody can work out is the
			// caller's bad request, never a 500.
			throw new InvalidCostException(policy, "Cost expression '" + expression.getExpressionString()
					+ "' of policy '" + policy + "' could not be evaluated: " + ex.getMessage());
		}
		return Costs.toUnits(value, policy);
	}

}

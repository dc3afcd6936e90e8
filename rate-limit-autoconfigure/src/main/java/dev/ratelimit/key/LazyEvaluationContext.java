package dev.ratelimit.key;

import java.lang.reflect.Method;
import java.util.List;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.ConstructorResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.IndexAccessor;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.OperatorOverloader;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypeComparator;
import org.springframework.expression.TypeConverter;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.TypedValue;

/**
 * A call's evaluation context that builds the real one (a
 * {@code StandardEvaluationContext}, or a {@code MethodBasedEvaluationContext}
 * for a method call) only when an expression is actually evaluated. Built-in
 * keys ({@code ip}, {@code principal}, {@code global}) and exemptions by
 * address or role read the {@link KeyContext} directly, so a call that needs
 * nothing else never pays for the SpEL context, its variable map and its
 * accessor lists.
 * <p>
 * Like the context it stands for, it belongs to one call: it may be handed to
 * another thread (an asynchronous request settled on completion), but is never
 * used by two at once.
 */
final class LazyEvaluationContext implements EvaluationContext {

	private final KeyExpressions expressions;

	private final KeyContext keys;

	private final @Nullable Method method;

	private final Object @Nullable [] args;

	private @Nullable EvaluationContext delegate;

	/**
	 * @param expressions builds the real context on first use
	 * @param keys the root object, with the current request
	 * @param method the invoked method, or {@code null} outside method calls
	 * @param args the arguments, or {@code null}
	 */
	LazyEvaluationContext(KeyExpressions expressions, KeyContext keys, @Nullable Method method,
			Object @Nullable [] args) {
		this.expressions = expressions;
		this.keys = keys;
		this.method = method;
		this.args = args;
	}

	/** @return the root object, without building the context */
	/** @return the method whose call this context evaluates, or {@code null} outside method calls */
	@Nullable Method method() {
		return this.method;
	}

	KeyContext keys() {
		return this.keys;
	}

	/** @return whether the real context has been built (for tests) */
	boolean isBuilt() {
		return this.delegate != null;
	}

	private EvaluationContext delegate() {
		EvaluationContext context = this.delegate;
		if (context == null) {
			context = this.expressions.build(this.keys, this.method, this.args);
			this.delegate = context;
		}
		return context;
	}

	@Override
	public TypedValue getRootObject() {
		return delegate().getRootObject();
	}

	@Override
	public List<PropertyAccessor> getPropertyAccessors() {
		return delegate().getPropertyAccessors();
	}

	@Override
	public List<IndexAccessor> getIndexAccessors() {
		return delegate().getIndexAccessors();
	}

	@Override
	public List<ConstructorResolver> getConstructorResolvers() {
		return delegate().getConstructorResolvers();
	}

	@Override
	public List<MethodResolver> getMethodResolvers() {
		return delegate().getMethodResolvers();
	}

	@Override
	public @Nullable BeanResolver getBeanResolver() {
		return delegate().getBeanResolver();
	}

	@Override
	public TypeLocator getTypeLocator() {
		return delegate().getTypeLocator();
	}

	@Override
	public TypeConverter getTypeConverter() {
		return delegate().getTypeConverter();
	}

	@Override
	public TypeComparator getTypeComparator() {
		return delegate().getTypeComparator();
	}

	@Override
	public OperatorOverloader getOperatorOverloader() {
		return delegate().getOperatorOverloader();
	}

	@Override
	public TypedValue assignVariable(String name, Supplier<TypedValue> valueSupplier) {
		return delegate().assignVariable(name, valueSupplier);
	}

	@Override
	public void setVariable(String name, @Nullable Object value) {
		delegate().setVariable(name, value);
	}

	@Override
	public @Nullable Object lookupVariable(String name) {
		return delegate().lookupVariable(name);
	}

	@Override
	public boolean isAssignmentEnabled() {
		return delegate().isAssignmentEnabled();
	}

}

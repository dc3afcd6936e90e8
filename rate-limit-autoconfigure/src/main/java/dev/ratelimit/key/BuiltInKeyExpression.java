package dev.ratelimit.key;

import org.jspecify.annotations.Nullable;
import org.springframework.core.convert.TypeDescriptor;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * A built-in key ({@code ip}, {@code principal}, {@code global}) as an
 * expression that is not parsed until something evaluates it as SpEL.
 * {@link KeyExpressions#key} reads a built-in key from the call's key context
 * by the {@link Key} it was parsed as, so an application whose limits use only built-in
 * keys never parses one, and does not load SpEL's parser and syntax tree
 * (about fifty classes while it starts). Anything else asked of it is SpEL's
 * own answer: the text parsed on first use, exactly as
 * {@link KeyExpressions#parse} would have parsed it.
 */
final class BuiltInKeyExpression implements Expression {

	private final Key key;

	private final String text;

	private volatile @Nullable Expression parsed;

	BuiltInKeyExpression(Key key) {
		this.key = key;
		this.text = key.text;
	}

	/** The built-in key this expression is, found once when it was parsed. */
	Key key() {
		return this.key;
	}

	/**
	 * The built-in keys and how each is read from a call's key context: the one
	 * list of them, for parsing ({@link KeyExpressions#parse}) and for evaluating
	 * ({@link KeyExpressions#key}) alike.
	 */
	enum Key {

		IP("ip") {
			@Override
			@Nullable String read(KeyContext keys) {
				return nonEmpty(keys.getIp());
			}
		},

		PRINCIPAL("principal") {
			@Override
			@Nullable String read(KeyContext keys) {
				return nonEmpty(keys.getPrincipal());
			}
		},

		GLOBAL(KeyContext.GLOBAL) {
			@Override
			@Nullable String read(KeyContext keys) {
				return KeyContext.GLOBAL;
			}
		};

		private final String text;

		Key(String text) {
			this.text = text;
		}

		/**
		 * Reads this key from a call's key context.
		 * @param keys the call's key context
		 * @return the key, or {@code null} when the call has none (no address, no principal)
		 */
		abstract @Nullable String read(KeyContext keys);

		/**
		 * Finds a built-in key by its text.
		 * @param text an expression's text
		 * @return the built-in key, or {@code null} when the text is not one
		 */
		static @Nullable Key of(String text) {
			for (Key key : values()) {
				if (key.text.equals(text)) {
					return key;
				}
			}
			return null;
		}

		private static @Nullable String nonEmpty(@Nullable String key) {
			return (key == null || key.isEmpty()) ? null : key;
		}

	}

	private Expression spel() {
		Expression expression = this.parsed;
		if (expression == null) {
			expression = new SpelExpressionParser().parseExpression(this.text);
			this.parsed = expression;
		}
		return expression;
	}

	@Override
	public String getExpressionString() {
		return this.text;
	}

	@Override
	public @Nullable Object getValue() throws EvaluationException {
		return spel().getValue();
	}

	@Override
	public <T> @Nullable T getValue(@Nullable Class<T> desiredResultType) throws EvaluationException {
		return spel().getValue(desiredResultType);
	}

	@Override
	public @Nullable Object getValue(@Nullable Object rootObject) throws EvaluationException {
		return spel().getValue(rootObject);
	}

	@Override
	public <T> @Nullable T getValue(@Nullable Object rootObject, @Nullable Class<T> desiredResultType)
			throws EvaluationException {
		return spel().getValue(rootObject, desiredResultType);
	}

	@Override
	public @Nullable Object getValue(EvaluationContext context) throws EvaluationException {
		return spel().getValue(context);
	}

	@Override
	public @Nullable Object getValue(EvaluationContext context, @Nullable Object rootObject) throws EvaluationException {
		return spel().getValue(context, rootObject);
	}

	@Override
	public <T> @Nullable T getValue(EvaluationContext context, @Nullable Class<T> desiredResultType)
			throws EvaluationException {
		return spel().getValue(context, desiredResultType);
	}

	@Override
	public <T> @Nullable T getValue(EvaluationContext context, @Nullable Object rootObject,
			@Nullable Class<T> desiredResultType)
			throws EvaluationException {
		return spel().getValue(context, rootObject, desiredResultType);
	}

	@Override
	public @Nullable Class<?> getValueType() throws EvaluationException {
		return spel().getValueType();
	}

	@Override
	public @Nullable Class<?> getValueType(@Nullable Object rootObject) throws EvaluationException {
		return spel().getValueType(rootObject);
	}

	@Override
	public @Nullable Class<?> getValueType(EvaluationContext context) throws EvaluationException {
		return spel().getValueType(context);
	}

	@Override
	public @Nullable Class<?> getValueType(EvaluationContext context, @Nullable Object rootObject)
			throws EvaluationException {
		return spel().getValueType(context, rootObject);
	}

	@Override
	public @Nullable TypeDescriptor getValueTypeDescriptor() throws EvaluationException {
		return spel().getValueTypeDescriptor();
	}

	@Override
	public @Nullable TypeDescriptor getValueTypeDescriptor(@Nullable Object rootObject) throws EvaluationException {
		return spel().getValueTypeDescriptor(rootObject);
	}

	@Override
	public @Nullable TypeDescriptor getValueTypeDescriptor(EvaluationContext context) throws EvaluationException {
		return spel().getValueTypeDescriptor(context);
	}

	@Override
	public @Nullable TypeDescriptor getValueTypeDescriptor(EvaluationContext context, @Nullable Object rootObject)
			throws EvaluationException {
		return spel().getValueTypeDescriptor(context, rootObject);
	}

	@Override
	public boolean isWritable(@Nullable Object rootObject) throws EvaluationException {
		return spel().isWritable(rootObject);
	}

	@Override
	public boolean isWritable(EvaluationContext context) throws EvaluationException {
		return spel().isWritable(context);
	}

	@Override
	public boolean isWritable(EvaluationContext context, @Nullable Object rootObject) throws EvaluationException {
		return spel().isWritable(context, rootObject);
	}

	@Override
	public void setValue(@Nullable Object rootObject, @Nullable Object value) throws EvaluationException {
		spel().setValue(rootObject, value);
	}

	@Override
	public void setValue(EvaluationContext context, @Nullable Object value) throws EvaluationException {
		spel().setValue(context, value);
	}

	@Override
	public void setValue(EvaluationContext context, @Nullable Object rootObject, @Nullable Object value)
			throws EvaluationException {
		spel().setValue(context, rootObject, value);
	}

	@Override
	public String toString() {
		return this.text;
	}

}

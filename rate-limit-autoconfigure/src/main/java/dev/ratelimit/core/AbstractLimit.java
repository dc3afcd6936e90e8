package dev.ratelimit.core;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * What every limit definition holds, whatever its kind: a name, a key
 * expression, a failure mode and a visibility, with the same rules for each.
 * Rate-limit policies, budgets and concurrency caps extend it and add what
 * decides their kind; only the default failure mode differs between them.
 * <p>
 * Immutable; built with a subclass of {@link AbstractBuilder}, whose setters
 * return the kind's own builder so that common and kind-specific setters chain
 * in any order.
 */
public abstract class AbstractLimit implements Limit {

	/** The key expression used when a limit names none: one count for all callers. */
	public static final String DEFAULT_KEY = "global";

	private final String name;

	private final String key;

	private final FailureMode failureMode;

	private final Visibility visibility;

	private final @Nullable String plan;

	/**
	 * Creates a limit from its builder's common values.
	 * @param builder the builder
	 */
	protected AbstractLimit(AbstractBuilder<?, ?> builder) {
		this.name = builder.name;
		this.key = builder.key;
		this.failureMode = builder.failureMode;
		this.visibility = builder.visibility;
		this.plan = builder.plan;
	}

	/** @return the limit's name, unique across every kind */
	@Override
	public final String name() {
		return this.name;
	}

	/** @return the key expression, never {@code null} */
	@Override
	public final String key() {
		return this.key;
	}

	/** @return what happens when the limit's store cannot answer */
	@Override
	public final FailureMode failureMode() {
		return this.failureMode;
	}

	/** @return whether the limit's state may be told to the caller */
	@Override
	public final Visibility visibility() {
		return this.visibility;
	}

	/** @return the plan this variant decides for, or {@code null}; a label, left out of {@code equals} */
	@Override
	public final @Nullable String plan() {
		return this.plan;
	}

	/**
	 * Copies this limit's common values into a builder of a copy, for the kinds'
	 * {@code toBuilder} methods.
	 * @param <B> the kind's builder
	 * @param builder the builder of the copy
	 * @return the builder
	 */
	protected final <B extends AbstractBuilder<B, ?>> B copyTo(B builder) {
		return builder.key(this.key).failureMode(this.failureMode).visibility(this.visibility).plan(this.plan);
	}

	/**
	 * Builds a limit of one kind: the name is checked at once, the common values
	 * here, the kind's own in the subclass.
	 *
	 * @param <B> the kind's builder, returned by every setter so that calls chain
	 * @param <L> the kind of limit built
	 */
	public abstract static class AbstractBuilder<B extends AbstractBuilder<B, L>, L extends AbstractLimit> {

		private final String name;

		private String key = DEFAULT_KEY;

		private FailureMode failureMode;

		private Visibility visibility = Visibility.AUTO;

		private @Nullable String plan;

		/**
		 * Starts a builder.
		 * @param name the limit's name, checked by {@link Limit#checkName(String)}
		 * @param defaultFailureMode the kind's failure mode when none is set
		 * @throws PolicyValidationException if the name breaks the rule
		 */
		protected AbstractBuilder(String name, FailureMode defaultFailureMode) {
			this.name = Limit.checkName(name);
			this.failureMode = defaultFailureMode;
		}

		/**
		 * Sets the key expression; blank means {@value AbstractLimit#DEFAULT_KEY}.
		 * @param key the key expression
		 * @return this builder
		 */
		public B key(String key) {
			this.key = (key == null || key.isBlank()) ? DEFAULT_KEY : key.strip();
			return self();
		}

		/**
		 * Sets what happens when the limit's store cannot answer; each kind has its
		 * own default (budgets fail closed, the other kinds open).
		 * @param failureMode the failure mode
		 * @return this builder
		 */
		public B failureMode(FailureMode failureMode) {
			this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
			return self();
		}

		/**
		 * Sets whether the limit's state may be told to the caller.
		 * @param visibility the visibility, {@link Visibility#AUTO} by default
		 * @return this builder
		 */
		public B visibility(Visibility visibility) {
			this.visibility = Objects.requireNonNull(visibility, "visibility");
			return self();
		}

		/**
		 * Labels the limit as the variant of a plan (see {@link Limit#plan()}).
		 * @param plan the plan's name, or {@code null} for none
		 * @return this builder
		 */
		public B plan(@Nullable String plan) {
			this.plan = plan;
			return self();
		}

		/** @return the key expression set so far */
		protected final String currentKey() {
			return this.key;
		}

		/** @return the visibility set so far, for a kind that allows only some */
		protected final Visibility currentVisibility() {
			return this.visibility;
		}

		/**
		 * Builds the limit, checking the values that depend on each other.
		 * @return the limit
		 * @throws PolicyValidationException naming the attribute of an invalid value
		 */
		public abstract L build();

		/**
		 * Returns this builder as its own kind, for the setters' chaining.
		 * @return this builder
		 */
		@SuppressWarnings("unchecked")
		protected final B self() {
			// Safe: B is by declaration the subclass this builder is an instance of.
			return (B) this;
		}

	}

}

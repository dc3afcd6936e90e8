package dev.ratelimit.autoconfigure;

import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;

/**
 * A bean looked up in the bean factory until every singleton exists and
 * remembered from then on, found or not.
 * <p>
 * The limiter's listeners exist before the beans they report to (a meter or an
 * observation registry) do, so they cannot be handed one; but once the context
 * is up, asking the bean factory on every decision (which an application
 * without the bean would otherwise do) costs more than the decision itself.
 *
 * @param <T> the bean's type
 */
class BeanLookup<T> implements Supplier<T> {

	private final ObjectProvider<T> provider;

	private volatile boolean settled;

	private volatile @Nullable T resolved;

	BeanLookup(ObjectProvider<T> provider) {
		this.provider = provider;
	}

	@Override
	public @Nullable T get() {
		if (this.settled) {
			return this.resolved;
		}
		T found = this.provider.getIfUnique();
		if (found != null) {
			this.resolved = found;
			this.settled = true;
		}
		return found;
	}

	/**
	 * Looks the bean up one last time and keeps the answer: called once every
	 * singleton, the bean among them, exists.
	 */
	void settle() {
		this.resolved = this.provider.getIfUnique();
		this.settled = true;
	}

}

package dev.ratelimit.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitListener;

/**
 * The application's limit listeners, for the events the expression evaluator
 * reports (defaulted plans), looked up on first use rather than when
 * the bean that reports to them is created, so that a listener may depend on
 * beans that depend on that bean (the expression evaluator, say).
 */
final class LazyLimitListener implements LimitListener {

	private final ObjectProvider<LimitListener> listeners;

	private volatile @Nullable LimitListener resolved;

	LazyLimitListener(ObjectProvider<LimitListener> listeners) {
		this.listeners = listeners;
	}

	@Override
	public void planDefaulted(Limit limit, boolean unknown) {
		listener().planDefaulted(limit, unknown);
	}

	private LimitListener listener() {
		LimitListener listener = this.resolved;
		if (listener == null) {
			listener = LimitListener.of(this.listeners.orderedStream().toList());
			this.resolved = listener;
		}
		return listener;
	}

}

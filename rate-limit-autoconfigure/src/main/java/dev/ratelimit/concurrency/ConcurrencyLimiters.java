package dev.ratelimit.concurrency;

/**
 * Sends each policy to the limiter of its scope: the local bulkheads, or the
 * distributed Redis semaphore.
 */
public final class ConcurrencyLimiters implements ConcurrencyLimiter {

	private final ConcurrencyLimiter local;

	private final ConcurrencyLimiter distributed;

	/**
	 * Creates the dispatcher.
	 * @param local the limiter of local policies
	 * @param distributed the limiter of distributed policies, or {@code null} when
	 * there is no shared backend
	 */
	public ConcurrencyLimiters(ConcurrencyLimiter local, ConcurrencyLimiter distributed) {
		this.local = local;
		this.distributed = distributed;
	}

	@Override
	public Permit acquire(ConcurrencyPolicy policy, String key) {
		if (policy.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED) {
			if (this.distributed == null) {
				throw new IllegalStateException("Concurrency policy '" + policy.name()
						+ "' is distributed but no distributed limiter is configured (rate-limit.backend=redis)");
			}
			return this.distributed.acquire(policy, key);
		}
		return this.local.acquire(policy, key);
	}

	/**
	 * Returns whether distributed policies can be served.
	 * @return whether a distributed limiter exists
	 */
	public boolean supportsDistributed() {
		return this.distributed != null;
	}

}

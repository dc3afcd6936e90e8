package dev.ratelimit.redis;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.PermitStore;

/**
 * A {@link PermitStore} that passes every call on, for tests to override the
 * calls they count or break.
 */
class ForwardingPermitStore implements PermitStore {

	private final PermitStore delegate;

	ForwardingPermitStore(PermitStore delegate) {
		this.delegate = delegate;
	}

	@Override
	public Attempt tryAcquire(ConcurrencyPolicy policy, String key, String id) {
		return this.delegate.tryAcquire(policy, key, id);
	}

	@Override
	public boolean renew(ConcurrencyPolicy policy, String key, String id) {
		return this.delegate.renew(policy, key, id);
	}

	@Override
	public void release(ConcurrencyPolicy policy, String key, String id) {
		this.delegate.release(policy, key, id);
	}

	@Override
	public int holders(ConcurrencyPolicy policy, String key) {
		return this.delegate.holders(policy, key);
	}

}

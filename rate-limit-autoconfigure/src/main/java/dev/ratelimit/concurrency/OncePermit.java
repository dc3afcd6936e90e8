package dev.ratelimit.concurrency;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A permit whose release takes effect once, however often and with whatever
 * ending it is released: the base of the permits that count or measure
 * something when given back.
 */
abstract class OncePermit implements Permit {

	private final AtomicBoolean released = new AtomicBoolean();

	@Override
	public final void release() {
		release(Ending.SUCCEEDED);
	}

	@Override
	public final void release(Ending ending) {
		if (this.released.compareAndSet(false, true)) {
			released(ending);
		}
	}

	/**
	 * Gives the permit back, the first time it is released.
	 * @param ending how its call ended
	 */
	protected abstract void released(Ending ending);

}

package dev.ratelimit.client;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.TimeSource;

/**
 * Pauses kept in this process: the store of the in-memory backend, and what
 * the shared store falls back to while Redis cannot answer. One entry per
 * configured provider, so it never grows.
 */
public final class LocalPauseStore implements PauseStore {

	private final TimeSource time;

	private final Map<String, AtomicLong> pausedUntil = new ConcurrentHashMap<>();

	/**
	 * Creates a store.
	 * @param time the clock pauses are measured on
	 */
	public LocalPauseStore(TimeSource time) {
		this.time = time;
	}

	@Override
	public long remainingMicros(String client) {
		AtomicLong until = this.pausedUntil.get(client);
		return (until != null) ? Math.max(0, until.get() - this.time.currentTimeMicros()) : 0;
	}

	@Override
	public void pause(String client, long micros) {
		if (micros <= 0) {
			return;
		}
		long until = this.time.currentTimeMicros() + micros;
		this.pausedUntil.computeIfAbsent(client, (name) -> new AtomicLong()).accumulateAndGet(until, Math::max);
	}

	@Override
	public boolean isShared() {
		return false;
	}

}

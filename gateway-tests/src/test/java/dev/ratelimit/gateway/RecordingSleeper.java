package dev.ratelimit.gateway;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.ratelimit.core.Sleeper;

/**
 * A sleeper that records each wait and returns at once: a shaping policy's
 * turn is seen to the microsecond without the test waiting for it.
 */
final class RecordingSleeper implements Sleeper {

	private final List<Long> waits = new CopyOnWriteArrayList<>();

	@Override
	public void sleepMicros(long micros) {
		this.waits.add(micros);
	}

	/** @return the waits so far, in µs, in order */
	List<Long> waits() {
		return List.copyOf(this.waits);
	}

	void clear() {
		this.waits.clear();
	}

}

package dev.ratelimit.support;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.TimeSource;

/**
 * A clock the test moves by hand.
 */
public final class ManualTimeSource implements TimeSource {

	private final AtomicLong micros;

	public ManualTimeSource(long startMicros) {
		this.micros = new AtomicLong(startMicros);
	}

	public ManualTimeSource() {
		this(1_700_000_000_000_000L);
	}

	@Override
	public long currentTimeMicros() {
		return this.micros.get();
	}

	public void advance(Duration duration) {
		this.micros.addAndGet(duration.toNanos() / 1_000L);
	}

	public void advanceMicros(long delta) {
		this.micros.addAndGet(delta);
	}

}

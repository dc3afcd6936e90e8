package dev.ratelimit.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.ratelimit.core.Sleeper;
import dev.ratelimit.support.ManualTimeSource;

/**
 * A sleeper that never sleeps: it records each wait and moves the manual clock
 * by it, so that the code under test sees the time pass.
 */
final class RecordingSleeper implements Sleeper {

	private final ManualTimeSource clock;

	private final boolean advance;

	private final List<Long> sleeps = new CopyOnWriteArrayList<>();

	RecordingSleeper(ManualTimeSource clock, boolean advance) {
		this.clock = clock;
		this.advance = advance;
	}

	@Override
	public void sleepMicros(long micros) {
		this.sleeps.add(micros);
		if (this.advance) {
			this.clock.advanceMicros(micros);
		}
	}

	List<Duration> sleeps() {
		return this.sleeps.stream().map((micros) -> Duration.ofNanos(micros * 1_000L)).toList();
	}

	List<Long> micros() {
		return List.copyOf(this.sleeps);
	}

	void clear() {
		this.sleeps.clear();
	}

}

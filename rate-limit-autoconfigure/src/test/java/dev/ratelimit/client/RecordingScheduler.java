package dev.ratelimit.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import dev.ratelimit.support.ManualTimeSource;

/**
 * The reactive twin of {@link RecordingSleeper}: a timer that never waits. A
 * delayed task is recorded, the manual clock is moved by its delay, and the
 * task runs at once on Reactor's parallel scheduler.
 */
final class RecordingScheduler implements Scheduler {

	private final ManualTimeSource clock;

	private final Scheduler runner = Schedulers.parallel();

	private final List<Long> delays = new CopyOnWriteArrayList<>();

	RecordingScheduler(ManualTimeSource clock) {
		this.clock = clock;
	}

	@Override
	public Disposable schedule(Runnable task) {
		return this.runner.schedule(task);
	}

	@Override
	public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
		long micros = unit.toMicros(delay);
		this.delays.add(micros);
		this.clock.advanceMicros(micros);
		return this.runner.schedule(task);
	}

	@Override
	public Worker createWorker() {
		Worker worker = this.runner.createWorker();
		return new Worker() {

			@Override
			public Disposable schedule(Runnable task) {
				return worker.schedule(task);
			}

			@Override
			public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
				return RecordingScheduler.this.schedule(task, delay, unit);
			}

			@Override
			public void dispose() {
				worker.dispose();
			}

		};
	}

	List<Duration> delays() {
		return this.delays.stream().map((micros) -> Duration.ofNanos(micros * 1_000L)).toList();
	}

	List<Long> micros() {
		return List.copyOf(this.delays);
	}

}

package dev.ratelimit.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link RateLimiter#acquireAsync}: the same decisions as {@link RateLimiter#acquire}
 * (keys, merging, shadow policies, failure modes), in memory taken inline
 * without a thread of another, and a turn in wait mode waited for through
 * {@link DecisionThreads#delay}, never a sleep.
 */
class RateLimiterAsyncTests {

	private final LimitKeys keys = new LimitKeys("rl", 128);

	private final ManualTimeSource clock = new ManualTimeSource();

	private final RecordingThreads threads = new RecordingThreads();

	/** A wait through the sleeper would fail the test: the asynchronous path must not sleep. */
	private final Sleeper noSleeping = (micros) -> {
		throw new AssertionError("slept " + micros + " µs");
	};

	@Test
	void inMemoryTheDecisionIsTakenInlineAndEqualsTheSynchronousOne() {
		RateLimiter async = limiter(new InMemoryRateLimitBackend(this.clock, 100));
		RateLimiter sync = limiter(new InMemoryRateLimitBackend(this.clock, 100));
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(2).refill("1/1h").build();
		for (int i = 0; i < 3; i++) {
			CompletionStage<RateLimitOutcome> stage = async.acquireAsync(List.of(new LimitRequest(policy, "k", 1)),
					this.threads);
			// Completed before the call returned: decided on the calling thread.
			assertThat(stage.toCompletableFuture()).isDone();
			RateLimitOutcome outcome = stage.toCompletableFuture().join();
			RateLimitOutcome expected = sync.acquire(List.of(new LimitRequest(policy, "k", 1)));
			assertThat(outcome.allowed()).isEqualTo(expected.allowed()).isEqualTo(i < 2);
			assertThat(outcome.decisions().get(0).decision()).isEqualTo(expected.decisions().get(0).decision());
		}
		assertThat(this.threads.executed).hasValue(0);
		assertThat(this.threads.delays).isEmpty();
	}

	@Test
	void layeredAndShadowPoliciesAreDecidedAsTheSynchronousPathDecidesThem() {
		RateLimiter async = limiter(new InMemoryRateLimitBackend(this.clock, 100));
		RateLimiter sync = limiter(new InMemoryRateLimitBackend(this.clock, 100));
		RateLimitPolicy loose = RateLimitPolicy.builder("loose").capacity(10).refill("1/1h").build();
		RateLimitPolicy tight = RateLimitPolicy.builder("tight").capacity(3).refill("1/1h").build();
		RateLimitPolicy shadow = RateLimitPolicy.builder("shadow").capacity(1).refill("1/1h").shadow(true).build();
		// The same policy twice is merged into one acquisition of cost 2.
		List<LimitRequest> call = List.of(new LimitRequest(loose, "k", 1), new LimitRequest(tight, "k", 1),
				new LimitRequest(tight, "k", 1), new LimitRequest(shadow, "k", 1));
		for (int i = 0; i < 3; i++) {
			RateLimitOutcome outcome = async.acquireAsync(call, this.threads).toCompletableFuture().join();
			RateLimitOutcome expected = sync.acquire(call);
			assertThat(outcome.allowed()).as("call %d", i).isEqualTo(expected.allowed());
			assertThat(outcome.decisions()).isEqualTo(expected.decisions());
			assertThat(outcome.shadowDecisions()).isEqualTo(expected.shadowDecisions());
		}
		assertThat(sync.acquire(call).violatedPolicies()).containsExactly("tight");
	}

	@Test
	void invalidCostsAndMissingKeysFailTheStageAsTheSynchronousPathThrows() {
		RateLimiter limiter = limiter(new InMemoryRateLimitBackend(this.clock, 100));
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(1).refill("1/1h")
			.missingKey(MissingKeyAction.REJECT).build();
		assertThatExceptionOfType(CompletionException.class)
			.isThrownBy(() -> limiter.acquireAsync(List.of(new LimitRequest(policy, "k", 2)), this.threads)
				.toCompletableFuture().join())
			.withCauseInstanceOf(InvalidCostException.class);
		assertThatExceptionOfType(CompletionException.class)
			.isThrownBy(() -> limiter.acquireAsync(List.of(new LimitRequest(policy, null, 1)), this.threads)
				.toCompletableFuture().join())
			.withCauseInstanceOf(RateLimitKeyMissingException.class);
	}

	@Test
	void aFailingBackendFallsBackAsTheSynchronousPathDoes() {
		RateLimitBackend failing = new FailingBackend();
		RateLimitPolicy local = RateLimitPolicy.builder("local").capacity(1).refill("1/1h")
			.failureMode(FailureMode.LOCAL).build();
		RateLimitPolicy open = RateLimitPolicy.builder("open").capacity(1).refill("1/1h")
			.failureMode(FailureMode.OPEN).build();
		RateLimitPolicy closed = RateLimitPolicy.builder("closed").capacity(1).refill("1/1h")
			.failureMode(FailureMode.CLOSED).build();
		RecordingListener asyncHeard = new RecordingListener();
		RecordingListener syncHeard = new RecordingListener();
		RateLimiter async = new RateLimiter(failing, this.keys, this.noSleeping,
				new InMemoryRateLimitBackend(this.clock, 100), asyncHeard);
		RateLimiter sync = new RateLimiter(failing, this.keys, this.noSleeping,
				new InMemoryRateLimitBackend(this.clock, 100), syncHeard);
		for (int i = 0; i < 2; i++) {
			RateLimitOutcome decided = async.acquireAsync(List.of(new LimitRequest(local, "k", 1)), this.threads)
				.toCompletableFuture().join();
			RateLimitOutcome expected = sync.acquire(List.of(new LimitRequest(local, "k", 1)));
			// Decided in memory: allowed once, then denied.
			assertThat(decided.allowed()).isEqualTo(expected.allowed()).isEqualTo(i == 0);
			assertThat(decided.decisions()).hasSize(1);
		}
		RateLimitOutcome unchecked = async.acquireAsync(List.of(new LimitRequest(open, "k", 1)), this.threads)
			.toCompletableFuture().join();
		assertThat(unchecked.allowed()).isTrue();
		assertThat(unchecked.decisions()).isEqualTo(sync.acquire(List.of(new LimitRequest(open, "k", 1))).decisions())
			.isEmpty();
		assertThatExceptionOfType(CompletionException.class)
			.isThrownBy(() -> async.acquireAsync(List.of(new LimitRequest(closed, "k", 1)), this.threads)
				.toCompletableFuture().join())
			.withCauseInstanceOf(RateLimitBackendUnavailableException.class);
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> sync.acquire(List.of(new LimitRequest(closed, "k", 1))));
		// The store ran on the threads for what may block (FailingBackend blocks), and was heard alike.
		assertThat(this.threads.executed).hasValue(4);
		assertThat(asyncHeard.events).isEqualTo(syncHeard.events);
	}

	@Test
	void aTurnInWaitModeIsADelayNotASleep() {
		RateLimiter limiter = limiter(new InMemoryRateLimitBackend(this.clock, 100));
		RateLimitPolicy paced = RateLimitPolicy.builder("paced").capacity(1).refill("1/1s")
			.maxWaitMicros(5_000_000).build();
		limiter.acquireAsync(List.of(new LimitRequest(paced, "k", 1)), this.threads).toCompletableFuture().join();
		CompletableFuture<RateLimitOutcome> second = limiter
			.acquireAsync(List.of(new LimitRequest(paced, "k", 1)), this.threads)
			.toCompletableFuture();
		// Its turn is a second away: the outcome comes once the delay has passed, and no thread slept.
		assertThat(this.threads.delays).containsExactly(1_000_000L);
		assertThat(second).isNotDone();
		this.threads.pending.get(0).complete(null);
		assertThat(second.join().allowed()).isTrue();
		assertThat(second.join().delayMicros()).isEqualTo(1_000_000L);
	}

	private RateLimiter limiter(RateLimitBackend backend) {
		return new RateLimiter(backend, this.keys, this.noSleeping, null, LimitListener.NONE);
	}

	/** Records what a decision hands over: tasks run at once, delays completed by the test. */
	static final class RecordingThreads implements DecisionThreads {

		final AtomicInteger executed = new AtomicInteger();

		final List<Long> delays = new ArrayList<>();

		final List<CompletableFuture<Void>> pending = new ArrayList<>();

		@Override
		public void execute(Runnable task) {
			this.executed.incrementAndGet();
			task.run();
		}

		@Override
		public CompletionStage<Void> delay(long micros) {
			this.delays.add(micros);
			CompletableFuture<Void> delay = new CompletableFuture<>();
			this.pending.add(delay);
			return delay;
		}

	}

	/** A store that cannot answer, as a remote one that is down. */
	static final class FailingBackend implements RateLimitBackend {

		@Override
		public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
			throw new IllegalStateException("store down");
		}

	}

	/** Hears what the limiter reports, in order. */
	static final class RecordingListener implements LimitListener {

		final List<String> events = new ArrayList<>();

		@Override
		public void decided(Limit limit, boolean allowed, DecisionSource source) {
			this.events.add("decided " + limit.name() + " " + allowed + " " + source);
		}

		@Override
		public void fellBack(Limit limit, FailureMode mode, RuntimeException cause) {
			this.events.add("fell back " + limit.name() + " " + mode);
		}

		@Override
		public void storeCalled(LimitKind kind, long nanos, boolean answered) {
			this.events.add("store " + kind + " " + answered);
		}

	}

}

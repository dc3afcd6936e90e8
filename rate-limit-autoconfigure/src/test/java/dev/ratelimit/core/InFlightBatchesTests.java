package dev.ratelimit.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link InFlightBatches}: a lone request goes at once, the ones that arrive
 * while a call is in flight go together in the next, each answered with its
 * own answer, and no request is lost or answered twice.
 */
class InFlightBatchesTests {

	/** A server the test answers by hand: each call is held until the test answers it. */
	private final List<Call> calls = new ArrayList<>();

	private final InFlightBatches<String, String> batches = new InFlightBatches<>((batch) -> {
		Call call = new Call(List.copyOf(batch), new CompletableFuture<>());
		this.calls.add(call);
		return call.answer();
	}, 3);

	@Test
	void aLoneRequestGoesAtOnce() {
		CompletionStage<String> answer = this.batches.submit("a");
		assertThat(this.calls).extracting(Call::batch).containsExactly(List.of("a"));
		this.calls.get(0).answerEach();
		assertThat(answer.toCompletableFuture()).isCompletedWithValue("a!");
	}

	@Test
	void requestsArrivingWhileACallIsInFlightGoTogetherInTheNextInTheirOrder() {
		CompletionStage<String> first = this.batches.submit("a");
		CompletionStage<String> second = this.batches.submit("b");
		CompletionStage<String> third = this.batches.submit("c");
		assertThat(this.calls).hasSize(1);
		assertThat(this.batches.waiting()).isEqualTo(2);
		this.calls.get(0).answerEach();
		assertThat(first.toCompletableFuture()).isCompletedWithValue("a!");
		assertThat(this.calls).extracting(Call::batch).containsExactly(List.of("a"), List.of("b", "c"));
		this.calls.get(1).answerEach();
		assertThat(second.toCompletableFuture()).isCompletedWithValue("b!");
		assertThat(third.toCompletableFuture()).isCompletedWithValue("c!");
		assertThat(this.batches.waiting()).isZero();
	}

	@Test
	void aBatchCarriesAtMostItsBoundAndTheRestGoNext() {
		this.batches.submit("a");
		for (String request : List.of("b", "c", "d", "e")) {
			this.batches.submit(request);
		}
		this.calls.get(0).answerEach();
		this.calls.get(1).answerEach();
		assertThat(this.calls).extracting(Call::batch)
			.containsExactly(List.of("a"), List.of("b", "c", "d"), List.of("e"));
	}

	@Test
	void aFailedCallFailsEachRequestOfItsBatchAndTheNextBatchStillGoes() {
		CompletionStage<String> first = this.batches.submit("a");
		CompletionStage<String> second = this.batches.submit("b");
		CompletionStage<String> third = this.batches.submit("c");
		IllegalStateException down = new IllegalStateException("down");
		this.calls.get(0).answer().completeExceptionally(down);
		assertThat(first.toCompletableFuture()).isCompletedExceptionally();
		assertThat(failure(first)).isSameAs(down);
		this.calls.get(1).answer().completeExceptionally(down);
		assertThat(failure(second)).isSameAs(down);
		assertThat(failure(third)).isSameAs(down);
		CompletionStage<String> after = this.batches.submit("d");
		this.calls.get(2).answerEach();
		assertThat(after.toCompletableFuture()).isCompletedWithValue("d!");
	}

	@Test
	void aCallThatThrowsBeforeItIsSentFailsItsBatchAndTheNextStillGoes() {
		AtomicInteger sent = new AtomicInteger();
		InFlightBatches<String, String> throwing = new InFlightBatches<>((batch) -> {
			if (sent.getAndIncrement() == 0) {
				throw new IllegalStateException("no connection");
			}
			return CompletableFuture.completedFuture(batch.stream().map((r) -> r + "!").toList());
		}, 3);
		assertThat(failure(throwing.submit("a"))).hasMessage("no connection");
		assertThat(throwing.submit("b").toCompletableFuture()).isCompletedWithValue("b!");
	}

	@Test
	void anAnswerOfTheWrongLengthFailsItsBatchRatherThanHandOutSomeoneElsesAnswer() {
		CompletionStage<String> first = this.batches.submit("a");
		CompletionStage<String> second = this.batches.submit("b");
		CompletionStage<String> third = this.batches.submit("c");
		this.calls.get(0).answerEach();
		this.calls.get(1).answer().complete(List.of("b!"));
		assertThat(first.toCompletableFuture()).isCompletedWithValue("a!");
		assertThat(failure(second)).isInstanceOf(IllegalStateException.class)
			.hasMessage("A batch of 2 request(s) was answered with 1 answer(s)");
		assertThat(third.toCompletableFuture()).isCompletedExceptionally();
	}

	@Test
	void aServerAnsweringSynchronouslyDoesNotGrowTheStack() {
		// Each answer queues the next request before returning: a nested send per batch would overflow the stack.
		AtomicInteger answered = new AtomicInteger();
		List<CompletionStage<Integer>> answers = new ArrayList<>();
		InFlightBatches<Integer, Integer>[] self = new InFlightBatches[1];
		self[0] = new InFlightBatches<>((batch) -> {
			if (answered.addAndGet(batch.size()) < 100_000) {
				answers.add(self[0].submit(answered.get()));
			}
			return CompletableFuture.completedFuture(batch);
		}, 64);
		answers.add(self[0].submit(0));
		assertThat(answered).hasValue(100_000);
		assertThat(answers).allSatisfy((answer) -> assertThat(answer.toCompletableFuture()).isCompleted());
	}

	@Test
	void manyThreadsLoseNoRequestAndGetEachTheirOwnAnswer() throws Exception {
		ExecutorService server = Executors.newSingleThreadExecutor();
		ExecutorService callers = Executors.newFixedThreadPool(8);
		ConcurrentLinkedQueue<Integer> sizes = new ConcurrentLinkedQueue<>();
		AtomicInteger inFlight = new AtomicInteger();
		AtomicInteger overlapping = new AtomicInteger();
		InFlightBatches<Integer, Integer> concurrent = new InFlightBatches<>((batch) -> {
			if (inFlight.incrementAndGet() > 1) {
				overlapping.incrementAndGet();
			}
			sizes.add(batch.size());
			return CompletableFuture.supplyAsync(() -> {
				inFlight.decrementAndGet();
				return batch.stream().map((request) -> -request).toList();
			}, server);
		}, 128);
		int perThread = 5_000;
		CountDownLatch done = new CountDownLatch(8);
		AtomicInteger wrong = new AtomicInteger();
		for (int thread = 0; thread < 8; thread++) {
			int base = thread * perThread;
			callers.execute(() -> {
				List<CompletableFuture<Integer>> mine = new ArrayList<>();
				for (int i = 0; i < perThread; i++) {
					mine.add(concurrent.submit(base + i).toCompletableFuture());
				}
				for (int i = 0; i < perThread; i++) {
					if (mine.get(i).join() != -(base + i)) {
						wrong.incrementAndGet();
					}
				}
				done.countDown();
			});
		}
		assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
		callers.shutdown();
		server.shutdown();
		assertThat(wrong).hasValue(0);
		assertThat(overlapping).as("calls in flight at once").hasValue(0);
		assertThat(sizes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(8 * perThread);
		assertThat(sizes).allMatch((size) -> size >= 1 && size <= 128);
		assertThat(concurrent.waiting()).isZero();
	}

	@Test
	void withTwoCallsInFlightTheThirdBatchWaitsForOneOfThemAndAllGoInQueueOrder() {
		InFlightBatches<String, String> two = new InFlightBatches<>((batch) -> {
			Call call = new Call(List.copyOf(batch), new CompletableFuture<>());
			this.calls.add(call);
			return call.answer();
		}, 3, 2);
		List<CompletionStage<String>> answers = new ArrayList<>();
		for (String request : List.of("a", "b", "c", "d", "e", "f")) {
			answers.add(two.submit(request));
		}
		// Two calls went at once, one request each; the rest wait for a place.
		assertThat(this.calls).extracting(Call::batch).containsExactly(List.of("a"), List.of("b"));
		assertThat(two.waiting()).isEqualTo(4);
		// The second answered first: its place goes to the next three, in their order.
		this.calls.get(1).answerEach();
		assertThat(this.calls).extracting(Call::batch)
			.containsExactly(List.of("a"), List.of("b"), List.of("c", "d", "e"));
		assertThat(answers.get(1).toCompletableFuture()).isCompletedWithValue("b!");
		assertThat(answers.get(0).toCompletableFuture()).isNotDone();
		this.calls.get(0).answerEach();
		assertThat(this.calls).extracting(Call::batch)
			.containsExactly(List.of("a"), List.of("b"), List.of("c", "d", "e"), List.of("f"));
		this.calls.get(2).answerEach();
		this.calls.get(3).answerEach();
		assertThat(answers).extracting((answer) -> answer.toCompletableFuture().join())
			.containsExactly("a!", "b!", "c!", "d!", "e!", "f!");
		assertThat(two.waiting()).isZero();
	}

	@Test
	void aClaimedPlaceIsACallInFlightAndWhatQueuesMeanwhileGoesOnceItIsReleased() {
		assertThat(this.batches.claim()).isTrue();
		// While the caller's own call is in flight, no other place is free and requests queue.
		assertThat(this.batches.claim()).isFalse();
		CompletionStage<String> queued = this.batches.submit("b");
		assertThat(this.calls).isEmpty();
		assertThat(this.batches.waiting()).isEqualTo(1);
		this.batches.release();
		assertThat(this.calls).extracting(Call::batch).containsExactly(List.of("b"));
		// The queued request's call is in flight now: no place is free until it is answered.
		assertThat(this.batches.claim()).isFalse();
		this.calls.get(0).answerEach();
		assertThat(queued.toCompletableFuture()).isCompletedWithValue("b!");
		assertThat(this.batches.claim()).isTrue();
		this.batches.release();
		assertThat(this.batches.inFlight()).isZero();
	}

	@Test
	void aBatchCarriesAtLeastOneRequest() {
		assertThatIllegalArgumentException().isThrownBy(() -> new InFlightBatches<String, String>(
				(batch) -> CompletableFuture.completedFuture(batch), 0))
			.withMessage("maxBatch must be at least 1: 0");
		assertThatIllegalArgumentException().isThrownBy(() -> new InFlightBatches<String, String>(
				(batch) -> CompletableFuture.completedFuture(batch), 1, 0))
			.withMessage("maxInFlight must be at least 1: 0");
	}

	/** What a completed stage failed with, as the call threw it. */
	private static Throwable failure(CompletionStage<?> stage) {
		CompletableFuture<?> future = stage.toCompletableFuture();
		assertThat(future).isCompletedExceptionally();
		try {
			future.join();
			throw new AssertionError("not failed");
		}
		catch (CompletionException ex) {
			return ex.getCause();
		}
	}

	/** One call to the server: what it carried, and its answer, completed by the test. */
	private record Call(List<String> batch, CompletableFuture<List<String>> answer) {

		void answerEach() {
			this.answer.complete(this.batch.stream().map((request) -> request + "!").toList());
		}

	}

}

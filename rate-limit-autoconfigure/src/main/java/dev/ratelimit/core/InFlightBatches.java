package dev.ratelimit.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * Calls to one server that go one at a time, each carrying every request that
 * queued while the one before it was in flight. A request goes at once when
 * nothing is in flight (a batch of one: a lone caller waits for nothing), and
 * requests arriving meanwhile wait for that call's answer, then go together in
 * the next: the batch is whatever queued, never a wait for a batch to fill.
 * <p>
 * Each request is answered on its own: a batch's answer holds one answer per
 * request, in the order they queued. A call that fails fails every request of
 * its batch with its failure, and the next batch goes all the same. A call
 * answered with the wrong number of answers fails its batch rather than hand
 * a request someone else's answer.
 * <p>
 * One instance per server (a Redis primary; a Cluster node): calls to
 * different servers do not wait for each other.
 * @param <Q> a request
 * @param <A> its answer
 */
public final class InFlightBatches<Q, A> {

	/** Sends one batch, in queue order; its stage answers each request, in that order. */
	@FunctionalInterface
	public interface BatchCall<Q, A> {

		/**
		 * Sends a batch.
		 * @param batch the requests, at least one, in the order they queued
		 * @return the answers, one per request, in the same order
		 */
		CompletionStage<List<A>> send(List<Q> batch);

	}

	/** A batch's call is being sent: an answer arriving now is followed by the sending loop. */
	private static final int SENDING = 0;

	/** The call was answered while it was being sent: the sending loop sends the next batch. */
	private static final int ANSWERED_INLINE = 1;

	/** The sending loop left: the call's answer sends the next batch. */
	private static final int LEFT = 2;

	private final BatchCall<Q, A> call;

	private final int maxBatch;

	/** The requests waiting for the next call, each with its answer; guarded by this. */
	private final ArrayDeque<Waiting<Q, A>> waiting = new ArrayDeque<>();

	/** Whether a call is in flight or being sent; guarded by this. */
	private boolean inFlight;

	/**
	 * Creates the batches of one server.
	 * @param call sends a batch
	 * @param maxBatch the most requests one call carries (the rest go in the
	 * next): bounds what one call costs the server
	 */
	public InFlightBatches(BatchCall<Q, A> call, int maxBatch) {
		if (maxBatch < 1) {
			throw new IllegalArgumentException("maxBatch must be at least 1: " + maxBatch);
		}
		this.call = call;
		this.maxBatch = maxBatch;
	}

	/**
	 * Queues a request, and sends it at once when no call is in flight.
	 * @param request the request
	 * @return its answer, or the failure of the call that carried it
	 */
	public CompletionStage<A> submit(Q request) {
		CompletableFuture<A> answer = new CompletableFuture<>();
		boolean send;
		synchronized (this) {
			this.waiting.add(new Waiting<>(request, answer));
			send = !this.inFlight;
			this.inFlight = true;
		}
		if (send) {
			sendNext();
		}
		return answer;
	}

	/** @return how many requests wait for the next call */
	public synchronized int waiting() {
		return this.waiting.size();
	}

	/**
	 * Sends batches while there are requests waiting. A call answered at once
	 * (inside {@code send}) is followed in this loop, not by a nested call, so
	 * that a server answering synchronously cannot grow the stack; a call
	 * answered later sends the next batch from its completion, before it hands
	 * out its own answers: the server has applied the batch answered, and the
	 * next one need not wait while each of its callers is woken.
	 */
	private void sendNext() {
		while (true) {
			List<Waiting<Q, A>> batch = next();
			if (batch == null) {
				return;
			}
			AtomicInteger handOver = new AtomicInteger(SENDING);
			send(batch).whenComplete((values, failure) -> {
				if (handOver.compareAndSet(SENDING, ANSWERED_INLINE)) {
					answer(batch, values, failure);
					return;
				}
				sendNext();
				answer(batch, values, failure);
			});
			if (handOver.compareAndSet(SENDING, LEFT)) {
				return;
			}
		}
	}

	/** Takes the next batch, or ends the flight when nothing waits. */
	private synchronized @Nullable List<Waiting<Q, A>> next() {
		if (this.waiting.isEmpty()) {
			this.inFlight = false;
			return null;
		}
		List<Waiting<Q, A>> batch = new ArrayList<>(Math.min(this.waiting.size(), this.maxBatch));
		while (!this.waiting.isEmpty() && batch.size() < this.maxBatch) {
			batch.add(this.waiting.poll());
		}
		return batch;
	}

	private CompletionStage<List<A>> send(List<Waiting<Q, A>> batch) {
		List<Q> requests = new ArrayList<>(batch.size());
		for (Waiting<Q, A> one : batch) {
			requests.add(one.request());
		}
		return AsyncCalls.started(() -> this.call.send(requests));
	}

	private static <Q, A> void answer(List<Waiting<Q, A>> batch, @Nullable List<A> values,
			@Nullable Throwable failure) {
		if (failure == null && values != null && values.size() == batch.size()) {
			for (int i = 0; i < batch.size(); i++) {
				batch.get(i).answer().complete(values.get(i));
			}
			return;
		}
		Throwable failed = (failure != null) ? unwrapped(failure)
				: new IllegalStateException("A batch of " + batch.size() + " request(s) was answered with "
						+ ((values != null) ? values.size() : "no") + " answer(s)");
		for (Waiting<Q, A> one : batch) {
			one.answer().completeExceptionally(failed);
		}
	}

	/** The failure a stage's {@link CompletionException} wraps, as the call threw it. */
	private static Throwable unwrapped(Throwable failure) {
		Throwable cause = failure;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private record Waiting<Q, A>(Q request, CompletableFuture<A> answer) {
	}

}

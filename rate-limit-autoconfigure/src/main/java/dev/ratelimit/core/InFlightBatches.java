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
 * Calls to one server, a bounded number in flight (one by default), each
 * carrying every request that queued while the ones before it were in flight.
 * A request goes at once when a call may go (a batch of one: a lone caller
 * waits for nothing), and requests arriving while no call may go wait for an
 * answer, then go together in the next: the batch is whatever queued, never a
 * wait for a batch to fill. Batches are sent in the order their requests
 * queued, one thread at a time.
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

	private final BatchCall<Q, A> call;

	private final int maxBatch;

	private final int maxInFlight;

	/** The requests waiting for the next call, each with its answer; guarded by this. */
	private final ArrayDeque<Waiting<Q, A>> waiting = new ArrayDeque<>();

	/** How many calls are in flight; guarded by this. */
	private int inFlight;

	/**
	 * Whether a thread is sending batches, and how many times it was asked to
	 * look again meanwhile: one thread sends at a time, in queue order.
	 */
	private final AtomicInteger sending = new AtomicInteger();

	/**
	 * Creates the batches of one server, one call in flight at a time.
	 * @param call sends a batch
	 * @param maxBatch the most requests one call carries (the rest go in the
	 * next): bounds what one call costs the server
	 */
	public InFlightBatches(BatchCall<Q, A> call, int maxBatch) {
		this(call, maxBatch, 1);
	}

	/**
	 * Creates the batches of one server.
	 * @param call sends a batch
	 * @param maxBatch the most requests one call carries (the rest go in the
	 * next): bounds what one call costs the server
	 * @param maxInFlight the most calls in flight at once: with more than one,
	 * the server has the next call at hand when it finishes one, rather than
	 * wait a round trip for it; calls are still handed to {@code call} in queue
	 * order, but whether the server gets them in that order is the transport's
	 * (Lettuce writes a command sent from its own event loop ahead of one
	 * another thread handed it a moment before)
	 */
	public InFlightBatches(BatchCall<Q, A> call, int maxBatch, int maxInFlight) {
		if (maxBatch < 1) {
			throw new IllegalArgumentException("maxBatch must be at least 1: " + maxBatch);
		}
		if (maxInFlight < 1) {
			throw new IllegalArgumentException("maxInFlight must be at least 1: " + maxInFlight);
		}
		this.call = call;
		this.maxBatch = maxBatch;
		this.maxInFlight = maxInFlight;
	}

	/**
	 * Queues a request, and sends it at once when fewer calls than the most
	 * allowed are in flight.
	 * @param request the request
	 * @return its answer, or the failure of the call that carried it
	 */
	public CompletionStage<A> submit(Q request) {
		CompletableFuture<A> answer = new CompletableFuture<>();
		synchronized (this) {
			this.waiting.add(new Waiting<>(request, answer));
		}
		sendNext();
		return answer;
	}

	/**
	 * Claims a place in flight for a request its caller sends itself, when
	 * nothing waits and a call may go: what a lone request would be sent as,
	 * without a queue, a future and a hand-over on its way. Requests that come
	 * meanwhile queue behind it as behind any call; {@link #release()} lets them
	 * go once its answer is in.
	 * @return whether the place is the caller's; {@code false} when the request
	 * must queue
	 */
	public synchronized boolean claim() {
		if (!this.waiting.isEmpty() || this.inFlight >= this.maxInFlight) {
			return false;
		}
		this.inFlight++;
		return true;
	}

	/** Gives back a place {@link #claim()} took, once its call is answered: what queued meanwhile goes next. */
	public void release() {
		landed();
		sendNext();
	}

	/** @return how many requests wait for the next call */
	public synchronized int waiting() {
		return this.waiting.size();
	}

	/** @return how many calls are in flight */
	public synchronized int inFlight() {
		return this.inFlight;
	}

	/**
	 * Sends batches while requests wait and calls may go. One thread sends at a
	 * time; one that finds another sending asks it to look again and leaves, so
	 * that a server answering synchronously (inside {@code send}) cannot grow
	 * the stack. A call answered frees its place and sends the next batch before
	 * it hands out its own answers: the server has applied the batch answered,
	 * and the next one need not wait while each of its callers is woken.
	 */
	private void sendNext() {
		if (this.sending.getAndIncrement() != 0) {
			return;
		}
		int asked = 1;
		do {
			List<Waiting<Q, A>> batch;
			while ((batch = next()) != null) {
				List<Waiting<Q, A>> sent = batch;
				send(sent).whenComplete((values, failure) -> {
					landed();
					sendNext();
					answer(sent, values, failure);
				});
			}
			asked = this.sending.addAndGet(-asked);
		}
		while (asked != 0);
	}

	/** Takes the next batch when one may go, counting it in flight; {@code null} when none may. */
	private synchronized @Nullable List<Waiting<Q, A>> next() {
		if (this.waiting.isEmpty() || this.inFlight >= this.maxInFlight) {
			return null;
		}
		this.inFlight++;
		List<Waiting<Q, A>> batch = new ArrayList<>(Math.min(this.waiting.size(), this.maxBatch));
		while (!this.waiting.isEmpty() && batch.size() < this.maxBatch) {
			batch.add(this.waiting.poll());
		}
		return batch;
	}

	/** A call was answered: its place is free. */
	private synchronized void landed() {
		this.inFlight--;
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

package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntConsumer;
import java.util.function.ToIntFunction;

import io.lettuce.core.cluster.SlotHash;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;

import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.InFlightBatches;

/**
 * Coalesces the decisions that wait for the same state in Redis at the same
 * moment into one call. Decisions queue by the hash slot of their first key
 * (the key itself for a rate limit, the state key of a budget, the first
 * policy's key of a layered decision; on one server as on a Cluster): each
 * slot has at most one call of decisions in flight, and the decisions asked for meanwhile
 * queue and go together, in the order they came, as one call of the
 * library's batch ({@code batch.lua}), which applies them on the server one
 * after another, each as its own call would, and answers each its own reply.
 * Nothing waits for a batch to fill: a decision goes at once when nothing is
 * in flight for its slot, as a call of its own, so that a lone caller sees
 * what it saw without coalescing (a caller that waits for its answer sends it
 * itself, on the path a call of its own takes, see {@link #alone}).
 * <p>
 * Why per slot, not per server: what a batch saves is the state of a key read
 * and written once for all its decisions, and the parsing and dispatch of
 * one command rather than many. On many distinct keys the first is nothing,
 * and one call in flight for the whole server would leave Redis idle while
 * each batch's reply travels back and the next is built, where decisions of
 * their own are pipelined on the one connection: measured, a server-wide
 * queue decided 10,000 keys at 0.8× the rate of one call per decision. Per
 * slot, decisions on different keys are pipelined as before and a hot key
 * (a global cap, a large tenant) coalesces. On a Cluster a call may only name
 * keys of one slot, and a slot that moves must redirect its calls whole: no
 * call is ever cross-slot.
 * <p>
 * Every kind of decision takes part (the drivers {@link LuaScripts#batched}
 * names): rate limits of every algorithm, layered decisions, budget
 * reservations and settles, distributed permits and their releases, outcome
 * give-backs. A call that fails as a whole fails each decision of its batch
 * with its failure, as each alone would have failed; a decision whose own
 * driver failed fails alone, with the failure its own call would have met.
 * <p>
 * A decision queued while Redis fell silent is refused when its batch is
 * formed, as a call of its own would be refused at the gate, rather than sent
 * to wait for a server that does not answer.
 */
final class DecisionCoalescer {

	/** The default bound of one call's decisions. */
	static final int DEFAULT_MAX_BATCH = 128;

	private static final IntConsumer NO_LISTENER = (size) -> {
	};

	private final LimiterLettuceConnectionFactory factory;

	private final @Nullable RedisSilence silence;

	private final int maxBatch;

	/** The queues, one per hash slot of the decisions' first keys, made when first used. */
	private final AtomicReferenceArray<InFlightBatches<DecisionBatch.Call, Object>> slots =
			new AtomicReferenceArray<>(SlotHash.SLOT_COUNT);

	/** Told the number of decisions of every call sent. */
	private volatile IntConsumer batchSizes = NO_LISTENER;

	/**
	 * While set, calls are kept here, in the order they were to go, instead of
	 * sent: lets a test queue decisions behind calls in flight. Guarded by
	 * itself.
	 */
	private volatile @Nullable List<Held> held;

	/** A call held back, and the answer its batches wait for. */
	private record Held(List<DecisionBatch.Call> calls, CompletableFuture<List<Object>> answer) {
	}

	/**
	 * Creates the coalescer of the limiter's factory.
	 * @param factory the limiter's factory
	 * @param silence the gate of the limiter's connection, checked again when
	 * a batch is formed; {@code null} for none
	 * @param maxBatch the most decisions one call carries (the rest go in the
	 * next): bounds how long one call holds the server
	 */
	DecisionCoalescer(LimiterLettuceConnectionFactory factory, @Nullable RedisSilence silence, int maxBatch) {
		if (maxBatch < 1) {
			throw new IllegalArgumentException("A batch carries at least one decision: " + maxBatch);
		}
		this.factory = factory;
		this.silence = silence;
		this.maxBatch = maxBatch;
	}

	/**
	 * Returns the most decisions one call carries.
	 * @return the bound
	 */
	int maxBatch() {
		return this.maxBatch;
	}

	/**
	 * Tells a listener the number of decisions of every call sent from now on.
	 * @param sizes the listener; called on the thread that sends the call
	 */
	void onBatch(IntConsumer sizes) {
		this.batchSizes = sizes;
	}

	/**
	 * Queues a decision call, sent at once when nothing is in flight for its
	 * slot.
	 * @param script its script, a decision driver's ({@link LuaScripts#batched})
	 * @param keys its keys, all in one Cluster slot
	 * @param args its arguments, UTF-8
	 * @return its reply; a failure of Redis fails the stage as the
	 * {@link org.springframework.dao.DataAccessException} its own call would
	 */
	CompletionStage<Object> submit(LimiterScript<?> script, List<String> keys, byte[][] args) {
		return batches(keys).submit(new DecisionBatch.Call(script, keys, args)).thenApply((outcome) -> {
			if (outcome instanceof RuntimeException failure) {
				throw failure;
			}
			return outcome;
		});
	}

	/**
	 * Returns whether a decision may go alone, as a call its caller makes
	 * itself and waits for: when nothing is in flight for its slot
	 * and nothing waits, as for a lone caller. The decisions that come while it
	 * is in flight queue behind it and go once the returned action runs.
	 * @param keys the decision's keys
	 * @return the action to run once its call is answered or failed, or
	 * {@code null} when the decision must queue ({@link #await})
	 */
	@Nullable Runnable alone(List<String> keys) {
		if (this.held != null) {
			return null;
		}
		InFlightBatches<DecisionBatch.Call, Object> batches = batches(keys);
		if (!batches.claim()) {
			return null;
		}
		this.batchSizes.accept(1);
		return batches::release;
	}

	/**
	 * Queues a decision call and waits for its reply: at most the busy timeout
	 * for the call in flight ahead of it and as long again for its own.
	 * @param script its script, a decision driver's
	 * @param keys its keys, all in one Cluster slot
	 * @param args its arguments, UTF-8
	 * @return its reply
	 * @throws org.springframework.dao.DataAccessException when Redis failed,
	 * as its own call would have
	 */
	Object await(LimiterScript<?> script, List<String> keys, byte[][] args) {
		Duration timeout = this.factory.busyTimeout().multipliedBy(2);
		try {
			return submit(script, keys, args).toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (ExecutionException ex) {
			throw LettuceFunctions.translate(AsyncCalls.cause(ex));
		}
		catch (TimeoutException ex) {
			// Lettuce ends every call at the busy timeout; this is a bound, not the usual way out.
			throw new QueryTimeoutException("No reply from Redis within " + timeout.toMillis()
					+ " ms to a coalesced rate limiter call");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisSystemException("Interrupted while waiting for Redis to decide", ex);
		}
	}

	/**
	 * Holds every call that is to be sent until the returned action runs, as if
	 * the calls in flight were slow: for tests that queue decisions behind them.
	 * @return the action that sends what was held, in order
	 */
	Runnable hold() {
		List<Held> kept = new ArrayList<>();
		this.held = kept;
		return () -> {
			List<Held> calls;
			synchronized (kept) {
				this.held = null;
				calls = new ArrayList<>(kept);
			}
			// Every call held is sent, and applied, before any is answered: an answer lets the next batch go,
			// and a batch sent from Lettuce's own thread is written at once, ahead of one another thread's
			// write still waits to be handed to it.
			List<CompletionStage<List<Object>>> sent = new ArrayList<>();
			for (Held call : calls) {
				sent.add(sendNow(call.calls()));
			}
			for (CompletionStage<List<Object>> stage : sent) {
				try {
					stage.toCompletableFuture().handle((outcomes, failure) -> null).get(30, TimeUnit.SECONDS);
				}
				catch (Exception ex) {
					throw new IllegalStateException("A held call was not answered in 30 s", ex);
				}
			}
			for (int i = 0; i < calls.size(); i++) {
				CompletableFuture<List<Object>> answer = calls.get(i).answer();
				sent.get(i).whenComplete((outcomes, failure) -> {
					if (failure != null) {
						answer.completeExceptionally(failure);
					}
					else {
						answer.complete(outcomes);
					}
				});
			}
		};
	}

	/**
	 * Returns how many calls {@link #hold()} holds now.
	 * @return the number held, 0 when nothing is held
	 */
	int held() {
		List<Held> kept = this.held;
		if (kept == null) {
			return 0;
		}
		synchronized (kept) {
			return kept.size();
		}
	}

	/**
	 * Returns how many decisions wait for a call in flight, in every queue.
	 * @return the number waiting
	 */
	int waiting() {
		return sum(InFlightBatches::waiting);
	}

	/**
	 * Returns how many calls are in flight, in every queue.
	 * @return the number in flight
	 */
	int inFlight() {
		return sum(InFlightBatches::inFlight);
	}

	private int sum(ToIntFunction<InFlightBatches<DecisionBatch.Call, Object>> count) {
		int sum = 0;
		AtomicReferenceArray<InFlightBatches<DecisionBatch.Call, Object>> all = this.slots;
		for (int slot = 0; slot < all.length(); slot++) {
			InFlightBatches<DecisionBatch.Call, Object> batches = all.get(slot);
			sum += (batches != null) ? count.applyAsInt(batches) : 0;
		}
		return sum;
	}

	private InFlightBatches<DecisionBatch.Call, Object> batches(List<String> keys) {
		AtomicReferenceArray<InFlightBatches<DecisionBatch.Call, Object>> all = this.slots;
		int slot = SlotHash.getSlot(keys.get(0).getBytes(StandardCharsets.UTF_8));
		InFlightBatches<DecisionBatch.Call, Object> batches = all.get(slot);
		if (batches == null) {
			all.compareAndSet(slot, null, new InFlightBatches<>(this::send, this.maxBatch));
			batches = all.get(slot);
		}
		return batches;
	}

	private CompletionStage<List<Object>> send(List<DecisionBatch.Call> calls) {
		List<Held> kept = this.held;
		if (kept != null) {
			synchronized (kept) {
				if (this.held == kept) {
					Held call = new Held(calls, new CompletableFuture<>());
					kept.add(call);
					return call.answer();
				}
			}
		}
		return sendNow(calls);
	}

	/** Sends what is not refused: alone as its own call, several as one batch. */
	private CompletionStage<List<Object>> sendNow(List<DecisionBatch.Call> calls) {
		Object[] outcomes = new Object[calls.size()];
		List<DecisionBatch.Call> sent = unrefused(calls, outcomes);
		if (sent.isEmpty()) {
			return CompletableFuture.completedStage(List.of(outcomes));
		}
		this.batchSizes.accept(sent.size());
		if (sent.size() == 1) {
			DecisionBatch.Call call = sent.get(0);
			return LettuceFunctions.runAsync(this.factory, call.script(), call.keys(), call.args())
				.thenApply((reply) -> merged(outcomes, List.of(replied(reply))));
		}
		DecisionBatch batch = DecisionBatch.of(sent);
		return LettuceFunctions.runAsync(this.factory, LuaScripts.batch(), batch.keys(), batch.args())
			.thenApply((reply) -> merged(outcomes, batch.outcomes(reply)));
	}

	/**
	 * The calls to send: those the gate does not refuse now; each refused
	 * one's outcome is its refusal.
	 */
	private List<DecisionBatch.Call> unrefused(List<DecisionBatch.Call> calls, Object[] outcomes) {
		RedisSilence gate = this.silence;
		if (gate == null || !gate.isAnySilent()) {
			return calls;
		}
		List<DecisionBatch.Call> sent = new ArrayList<>(calls.size());
		for (int i = 0; i < calls.size(); i++) {
			String key = calls.get(i).keys().get(0);
			if (gate.isSilent(key)) {
				outcomes[i] = gate.refusal(key);
			}
			else {
				sent.add(calls.get(i));
			}
		}
		return sent;
	}

	/** Each call's outcome: a refusal already in place, else the next of the replies, in order. */
	private static List<Object> merged(Object[] outcomes, List<@Nullable Object> replies) {
		int next = 0;
		List<Object> merged = new ArrayList<>(outcomes.length);
		for (Object outcome : outcomes) {
			merged.add((outcome != null) ? outcome : replied(replies.get(next++)));
		}
		return merged;
	}

	private static Object replied(@Nullable Object reply) {
		return Objects.requireNonNull(reply, "every decision script replies");
	}

}

package dev.ratelimit.support;

import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Calls held in flight by a test: the application's endpoint enters a call by
 * its id and is answered when the test releases it, so that a concurrency
 * cap's permit is held for as long as the test needs. The one such helper of
 * the tests, for servlet endpoints (which wait) and reactive ones (which
 * complete a stage). Ids are the test's own, so tests never meet.
 */
public final class HeldCalls {

	private static final Map<String, Held> CALLS = new ConcurrentHashMap<>();

	private HeldCalls() {
	}

	/**
	 * Enters a call, on the application's side, without waiting.
	 * @param id the call's id
	 * @return completes with the answer's body when the test releases the call
	 */
	public static CompletableFuture<String> enter(String id) {
		Held held = held(id);
		held.entered().complete(null);
		return held.released();
	}

	/**
	 * Enters a call and waits until the test releases it, on the application's
	 * side (a servlet thread), at most 30 seconds.
	 * @param id the call's id
	 * @return the answer's body
	 */
	public static String await(String id) {
		try {
			return enter(id).get(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while held", ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IllegalStateException("Call " + id + " was never released", ex);
		}
	}

	/**
	 * Returns when a call has entered, on the test's side.
	 * @param id the call's id
	 * @return completes once the application entered the call
	 */
	public static CompletableFuture<Void> entered(String id) {
		return held(id).entered();
	}

	/**
	 * Makes a call on another thread, on the test's side, and returns once the
	 * application entered it (at most 10 seconds), so that it is in flight.
	 * @param <T> what the call returns
	 * @param id the call's id, which the call hands to the application
	 * @param call the call, such as a request to an endpoint that enters it
	 * @return the call's result, once the test released it
	 */
	public static <T> CompletableFuture<T> start(String id, Callable<T> call) {
		CompletableFuture<T> result = CompletableFuture.supplyAsync(() -> {
			try {
				return call.call();
			}
			catch (Exception ex) {
				throw new CompletionException(ex);
			}
		});
		entered(id).orTimeout(10, TimeUnit.SECONDS).join();
		return result;
	}

	/**
	 * Releases a call: its endpoint answers.
	 * @param id the call's id
	 */
	public static void release(String id) {
		held(id).released().complete("released " + id);
	}

	/**
	 * Fails a call: its endpoint fails with the given error.
	 * @param id the call's id
	 * @param failure the error
	 */
	public static void fail(String id, Throwable failure) {
		held(id).released().completeExceptionally(failure);
	}

	private static Held held(String id) {
		return CALLS.computeIfAbsent(id, (key) -> new Held(new CompletableFuture<>(), new CompletableFuture<>()));
	}

	private record Held(CompletableFuture<Void> entered, CompletableFuture<String> released) {
	}

}

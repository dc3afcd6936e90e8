package dev.ratelimit.web.reactive;

import java.security.Principal;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import org.springframework.web.server.ServerWebExchange;

/**
 * The WebFlux request of the call running on this thread. A WebFlux request
 * travels in the Reactor context of its pipeline, not on a thread; a limited
 * call reads it from the thread while it is bound here: while a deferred
 * call ({@code Mono}, {@code Flux}) decides and calls its method, and while
 * a plain handler method is called ({@link RequestBoundHandlerAdapter}).
 * Every binding restores what the thread held before.
 */
final class BoundRequests {

	private static final ThreadLocal<Bound> CURRENT = new ThreadLocal<>();

	private BoundRequests() {
	}

	/**
	 * A request bound to a thread: its exchange, and its principal, resolved
	 * from the pipeline before the call.
	 *
	 * @param exchange the exchange
	 * @param principal the principal, {@link ReactiveExchange#ANONYMOUS} for an anonymous request
	 */
	record Bound(ServerWebExchange exchange, Principal principal) {
	}

	/** @return the request bound to this thread, or {@code null} */
	static @Nullable Bound current() {
		return CURRENT.get();
	}

	/**
	 * Binds a request to this thread.
	 * @param request the request, or {@code null} to bind none
	 * @return what the thread held before, for {@link #restore}
	 */
	static @Nullable Bound bind(@Nullable Bound request) {
		Bound outer = CURRENT.get();
		if (request != null) {
			CURRENT.set(request);
		}
		else if (outer != null) {
			CURRENT.remove();
		}
		return outer;
	}

	/**
	 * Restores what a thread held before a {@link #bind}.
	 * @param outer what {@link #bind} returned
	 */
	static void restore(@Nullable Bound outer) {
		if (outer != null) {
			CURRENT.set(outer);
		}
		else {
			CURRENT.remove();
		}
	}

	/**
	 * Returns what runs a task with a request bound.
	 * @param request the request
	 * @return the executor: it runs each task at once, on the calling thread
	 */
	static Executor inRequest(@Nullable Bound request) {
		return (task) -> {
			Bound outer = bind(request);
			try {
				task.run();
			}
			finally {
				restore(outer);
			}
		};
	}

	/**
	 * Returns what runs tasks on another executor with the request bound to
	 * the calling thread when they were handed over bound again.
	 * @param target runs the tasks
	 * @return the executor
	 */
	static Executor carrying(Executor target) {
		return (task) -> {
			Bound request = CURRENT.get();
			target.execute((request != null) ? () -> inRequest(request).execute(task) : task);
		};
	}

	/**
	 * Returns a {@code Mono} subscribed to, and whose signals are delivered,
	 * with a request bound: what runs synchronously inside it (a handler
	 * method whose arguments are at hand) sees the request.
	 * @param <T> the value's type
	 * @param request the request
	 * @param source the {@code Mono}
	 * @return the bound {@code Mono}
	 */
	static <T> Mono<T> bound(Bound request, Mono<T> source) {
		return new MonoOperator<T, T>(source) {

			@Override
			public void subscribe(CoreSubscriber<? super T> actual) {
				Bound outer = bind(request);
				try {
					this.source.subscribe(new BoundSubscriber<>(actual, request));
				}
				finally {
					restore(outer);
				}
			}

		};
	}

	/**
	 * Returns a {@code Flux} whose signals are delivered with a request bound:
	 * what runs synchronously on them (a handler method called once its body
	 * is read) sees the request.
	 * @param <T> the values' type
	 * @param request the request
	 * @param source the {@code Flux}
	 * @return the bound {@code Flux}
	 */
	static <T> Flux<T> signals(Bound request, Flux<T> source) {
		return Flux.from((subscriber) -> source
			.subscribe(new BoundSubscriber<>(Operators.toCoreSubscriber(subscriber), request)));
	}

	/**
	 * Returns a {@code Mono} whose signals are delivered with a request bound.
	 * @param <T> the value's type
	 * @param request the request
	 * @param source the {@code Mono}
	 * @return the bound {@code Mono}
	 */
	static <T> Mono<T> signals(Bound request, Mono<T> source) {
		return Mono.from((subscriber) -> source
			.subscribe(new BoundSubscriber<>(Operators.toCoreSubscriber(subscriber), request)));
	}

	/**
	 * Delivers each signal with the request bound to the delivering thread.
	 * The binding lasts while everything downstream handles the signal (the
	 * result's handling, the response's writing): a limited method that such
	 * code calls for another request (a shared {@code cache()} completing)
	 * would see this one. Every bind is undone in {@code finally}, so nothing
	 * stays bound once the signal is delivered.
	 * @param actual the subscriber it delivers to
	 * @param request the request it binds
	 */
	private record BoundSubscriber<T>(CoreSubscriber<? super T> actual, Bound request) implements CoreSubscriber<T> {

		@Override
		public Context currentContext() {
			return this.actual.currentContext();
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			this.actual.onSubscribe(subscription);
		}

		@Override
		public void onNext(T value) {
			deliver(Subscriber::onNext, value);
		}

		@Override
		public void onError(Throwable failure) {
			deliver(Subscriber::onError, failure);
		}

		@Override
		public void onComplete() {
			deliver((subscriber, self) -> subscriber.onComplete(), this);
		}

		// The signals are non-capturing: nothing is allocated per element.
		private <V> void deliver(BiConsumer<CoreSubscriber<? super T>, V> signal, V value) {
			Bound outer = bind(this.request);
			try {
				signal.accept(this.actual, value);
			}
			finally {
				restore(outer);
			}
		}

	}

}

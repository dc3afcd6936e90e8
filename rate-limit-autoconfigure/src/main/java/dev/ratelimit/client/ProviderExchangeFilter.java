package dev.ratelimit.client;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

import dev.ratelimit.concurrency.Permit;

/**
 * The client of one provider as an {@link ExchangeFilterFunction} of a
 * {@code WebClient}: the same rules as its blocking {@link ProviderClient}
 * (they share one {@link ProviderCallPolicy}, so pauses, metrics and the
 * "paused" gauge are the provider's, whichever client saw them), carried out
 * without blocking an event loop:
 * <ul>
 * <li>the steps that may block (the pause store, the limiter's wait for the
 * provider's rate and cap) run on the {@code blocking} scheduler, by default
 * {@link Schedulers#boundedElastic()};</li>
 * <li>waits (a pause, a backoff) are {@link Mono#delay delays} on the
 * {@code timer} scheduler, by default {@link Schedulers#parallel()}: no thread
 * is held while waiting;</li>
 * <li>the permit of the provider's cap is held until the response's body is
 * consumed or released, or the exchange is cancelled;</li>
 * <li>each retry is a new exchange of the same request, deferred until its
 * wait is over. A request body that cannot be written twice (a one-shot
 * {@code Publisher}) should not be retried: the default retried methods
 * carry no body or an idempotent one.</li>
 * </ul>
 * A request already handled by a provider client (a builder customized twice)
 * passes through the second filter untouched.
 */
public final class ProviderExchangeFilter implements ExchangeFilterFunction {

	private final ProviderCallPolicy policy;

	private final Scheduler timer;

	private final Scheduler blocking;

	/**
	 * Creates the filter of a provider, waiting on Reactor's parallel scheduler
	 * and taking its limits on the bounded elastic one.
	 * @param client the provider's client, whose rules the filter follows
	 */
	public ProviderExchangeFilter(ProviderClient client) {
		this(client, Schedulers.parallel(), Schedulers.boundedElastic());
	}

	/**
	 * Creates the filter of a provider.
	 * @param client the provider's client, whose rules the filter follows
	 * @param timer where waits are timed
	 * @param blocking where the steps that may block run: the pause store and
	 * the provider's rate and cap
	 */
	public ProviderExchangeFilter(ProviderClient client, Scheduler timer, Scheduler blocking) {
		this.policy = client.policy();
		this.timer = timer;
		this.blocking = blocking;
	}

	/** @return the provider's settings */
	public ClientSettings settings() {
		return this.policy.settings();
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		if (request.attribute(ProviderCallPolicy.HANDLED).isPresent()) {
			return next.exchange(request);
		}
		ClientRequest handled = ClientRequest.from(request)
			.attribute(ProviderCallPolicy.HANDLED, this.policy.settings().name())
			.build();
		return Mono.defer(() -> {
			ProviderCallPolicy.Call call = this.policy.start(request.method().name());
			return onBlocking(call::beforeFirstAttempt).flatMap(this::delay)
				.then(Mono.defer(() -> attempt(call, handled, next)));
		});
	}

	private Mono<ClientResponse> attempt(ProviderCallPolicy.Call call, ClientRequest request, ExchangeFunction next) {
		HeldPermit permit = new HeldPermit();
		// A refusal of the provider's rate or cap is the call's error; only the exchange's own failures are read.
		// The permit is held as it is taken: one taken while the call is cancelled is given back at once.
		return onBlocking(() -> permit.hold(call.takeTurn()))
			.then(Mono.defer(() -> next.exchange(request))
				.map(Attempted::answer)
				.onErrorResume((ex) -> Mono.just(Attempted.failure(ex))))
			.flatMap((attempted) -> (attempted.response() != null)
					? answered(attempted.response(), permit, call, request, next)
					: failed(Objects.requireNonNull(attempted.failure(), "an attempt without an answer failed"), permit,
							call, request, next))
			.doOnCancel(permit::release);
	}

	private Mono<ClientResponse> answered(ClientResponse response, HeldPermit permit, ProviderCallPolicy.Call call,
			ClientRequest request, ExchangeFunction next) {
		return onBlocking(() -> call.afterAnswer(response.statusCode().value(),
				response.headers().asHttpHeaders()::getFirst))
			// Cancelled while the answer is read: nobody will read its body.
			.doOnCancel(() -> response.releaseBody().onErrorComplete().subscribe())
			.flatMap((after) -> after.retry()
					? response.releaseBody()
						.onErrorComplete()
						.then(Mono.fromRunnable(permit::release))
						.then(retry(after, call, request, next))
					: Mono.just(holding(response, permit)));
	}

	private Mono<ClientResponse> failed(Throwable failure, HeldPermit permit, ProviderCallPolicy.Call call,
			ClientRequest request, ExchangeFunction next) {
		permit.release();
		ProviderCallPolicy.Next after = call.afterFailure(failure);
		return after.retry() ? retry(after, call, request, next) : Mono.error(failure);
	}

	private Mono<ClientResponse> retry(ProviderCallPolicy.Next after, ProviderCallPolicy.Call call,
			ClientRequest request, ExchangeFunction next) {
		return delay(after.waitMicros()).then(Mono.defer(() -> attempt(call, request, next)));
	}

	/**
	 * The response, giving its permit back when its body is consumed, released
	 * or cancelled: before the caller hears of it, so that a call that has its
	 * answer has given its permit back.
	 */
	private static ClientResponse holding(ClientResponse response, HeldPermit permit) {
		return response.mutate()
			.body((body) -> body.doOnTerminate(permit::release).doOnCancel(permit::release))
			.build();
	}

	private <T> Mono<T> onBlocking(Callable<T> step) {
		return Mono.fromCallable(step).subscribeOn(this.blocking);
	}

	private Mono<Void> delay(long micros) {
		return (micros > 0) ? Mono.delay(Duration.ofNanos(micros * 1_000L), this.timer).then() : Mono.empty();
	}

	/** What an exchange ended with: an answer, or a failure. */
	private record Attempted(@Nullable ClientResponse response, @Nullable Throwable failure) {

		static Attempted answer(ClientResponse response) {
			return new Attempted(response, null);
		}

		static Attempted failure(Throwable failure) {
			return new Attempted(null, failure);
		}

	}

	/**
	 * The permit of one attempt, given back once: when the attempt fails, its
	 * answer is read to retry, its body is done with, or it is cancelled. A
	 * permit taken after the attempt was cancelled is given back at once.
	 */
	private static final class HeldPermit {

		private static final Permit RELEASED = () -> {
		};

		private final AtomicReference<Permit> permit = new AtomicReference<>();

		HeldPermit hold(Permit taken) {
			if (!this.permit.compareAndSet(null, taken)) {
				taken.release();
			}
			return this;
		}

		boolean isHeld() {
			Permit held = this.permit.get();
			return held != null && held != RELEASED;
		}

		void release() {
			Permit held = this.permit.getAndSet(RELEASED);
			if (held != null && held != RELEASED) {
				held.release();
			}
		}

	}

}

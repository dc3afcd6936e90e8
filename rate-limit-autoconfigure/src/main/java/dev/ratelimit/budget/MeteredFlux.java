package dev.ratelimit.budget;

import java.math.BigDecimal;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToLongFunction;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A {@code Flux} whose elements report their usage to a budgeted call's
 * {@link BudgetMeter}, one element at a time: each element's cost is reported
 * before the element is passed on, and the stream completes, without that
 * element, once the meter refuses (the reservation is used up and could not
 * be extended). What the subscriber receives therefore stays within the
 * reservation, and the call is settled to what was reported (or, once
 * stopped, to its reservation), as {@link BudgetMeter} describes:
 *
 * <pre class="code">
 * &#64;CostBudget(value = "tenant-daily", estimate = "#request.maxTokens * 0.000002", onOverrun = "extend")
 * Flux&lt;String&gt; tokens(ChatRequest request) {
 *     return MeteredFlux.metered(model.stream(request), BudgetMeter.current(), (token) -&gt; PRICE_PER_TOKEN);
 * }
 * </pre>
 *
 * Take the meter in the method's body, as above: that is where the advice
 * binds it. A report that fits the reservation is answered from memory, on
 * the thread the element came on; one that must first extend the reservation
 * on a store (an {@code extend} budget) is made on Reactor's bounded elastic
 * scheduler, so that an event loop never waits for Redis, and the stream
 * resumes there. Elements stay in order.
 */
public final class MeteredFlux {

	private MeteredFlux() {
	}

	/**
	 * Meters a stream whose elements cost an amount in the budgets' unit.
	 * @param stream the stream
	 * @param meter the call's meter, from {@link BudgetMeter#current()}
	 * @param cost each element's cost, not negative (rounded up to the next micro-unit)
	 * @param <T> the elements' type
	 * @return the metered stream
	 */
	public static <T> Flux<T> metered(Flux<T> stream, BudgetMeter meter, Function<? super T, BigDecimal> cost) {
		Objects.requireNonNull(cost, "cost");
		return meteredMicros(stream, meter, (element) -> Amounts.toMicrosRoundingUp(cost.apply(element)));
	}

	/**
	 * Meters a stream whose elements cost micro-units of the budgets' unit.
	 * @param stream the stream
	 * @param meter the call's meter, from {@link BudgetMeter#current()}
	 * @param microsOf each element's cost in micro-units, not negative
	 * @param <T> the elements' type
	 * @return the metered stream
	 */
	public static <T> Flux<T> meteredMicros(Flux<T> stream, BudgetMeter meter, ToLongFunction<? super T> microsOf) {
		Objects.requireNonNull(stream, "stream");
		Objects.requireNonNull(meter, "meter");
		Objects.requireNonNull(microsOf, "microsOf");
		return stream.concatMap((element) -> report(meter, microsOf.applyAsLong(element)).map(
				(fits) -> fits ? new Reported<T>(element) : Reported.<T>refused()), 1)
			.takeWhile(Reported::fits)
			.map(Reported::element);
	}

	private static Mono<Boolean> report(BudgetMeter meter, long micros) {
		if (meter.wouldExtend(micros)) {
			// Extending asks the store: off the event loop, which must never wait for Redis.
			return Mono.fromCallable(() -> meter.addMicros(micros)).subscribeOn(Schedulers.boundedElastic());
		}
		return Mono.just(meter.addMicros(micros));
	}

	/** An element whose usage was reported, or the refusal that ends the stream. */
	private record Reported<T>(@Nullable T element, boolean fits) {

		private static final Reported<?> REFUSED = new Reported<>(null, false);

		Reported(T element) {
			this(element, true);
		}

		@SuppressWarnings("unchecked")
		static <T> Reported<T> refused() {
			return (Reported<T>) REFUSED;
		}

	}

}

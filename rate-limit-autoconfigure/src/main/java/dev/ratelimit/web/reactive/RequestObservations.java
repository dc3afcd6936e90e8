package dev.ratelimit.web.reactive;

import java.util.function.Supplier;

import io.micrometer.observation.Observation;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.http.server.reactive.observation.ServerRequestObservationContext;
import org.springframework.web.server.ServerWebExchange;

/**
 * Puts a WebFlux request's observation in scope while the route limits decide
 * the request, so that the limit listeners that record on the current
 * observation (decisions in traces) find it.
 * <p>
 * WebFlux keeps the request's observation in Reactor's context, not in a
 * thread-local; a decision taken inline on the event loop (the in-memory store,
 * a local cap) would otherwise see none. A decision that completes on another
 * thread (Redis, through Lettuce) is not covered: it reports there, outside
 * the scope. Only created when an observation registry and the listener exist,
 * so a request of an application without them pays nothing for it.
 */
public final class RequestObservations {

	/** Where Spring keeps the request's observation in Reactor's context ({@code ObservationThreadLocalAccessor.KEY}). */
	private static final String OBSERVATION_KEY = "micrometer.observation";

	/**
	 * Whether the request has an observation of Spring's HTTP server
	 * instrumentation, so that {@link #inScope} may find one.
	 * @param exchange the request
	 * @return whether to decide it in {@link #inScope}
	 */
	boolean observed(ServerWebExchange exchange) {
		return exchange.getAttribute(ServerRequestObservationContext.CURRENT_OBSERVATION_CONTEXT_ATTRIBUTE) != null;
	}

	/**
	 * Runs a decision with the request's observation, read from the subscriber's
	 * context, in scope on the thread that decides.
	 * @param decision decides, and returns what follows
	 * @return what follows the decision
	 */
	Mono<Void> inScope(Supplier<Mono<Void>> decision) {
		return Mono.deferContextual((context) -> decide(context, decision));
	}

	private static Mono<Void> decide(ContextView context, Supplier<Mono<Void>> decision) {
		Object current = context.getOrDefault(OBSERVATION_KEY, null);
		if (!(current instanceof Observation observation) || observation.isNoop()) {
			return decision.get();
		}
		try (Observation.Scope scope = observation.openScope()) {
			return decision.get();
		}
	}

}

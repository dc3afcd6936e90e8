package dev.ratelimit.metrics;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Keeps what a tracing handler would see: the events of every observation and
 * the observations once stopped, with their key values at that moment.
 */
final class RecordingObservationHandler implements ObservationHandler<Observation.Context> {

	private final Map<Observation.Context, List<Observation.Event>> events = new ConcurrentHashMap<>();

	private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

	@Override
	public boolean supportsContext(Observation.Context context) {
		return true;
	}

	@Override
	public void onEvent(Observation.Event event, Observation.Context context) {
		this.events.computeIfAbsent(context, (c) -> new CopyOnWriteArrayList<>()).add(event);
	}

	@Override
	public void onStop(Observation.Context context) {
		this.stopped.add(context);
	}

	/** @return the observations stopped so far, in order */
	List<Observation.Context> stopped() {
		return List.copyOf(this.stopped);
	}

	/** @return the contextual names of an observation's events of that name, in order */
	List<String> events(Observation.Context context, String name) {
		return this.events.getOrDefault(context, List.of())
			.stream()
			.filter((event) -> event.getName().equals(name))
			.map(Observation.Event::getContextualName)
			.toList();
	}

	/** @return an observation's high-cardinality value of that key, or {@code null} */
	static String value(Observation.Context context, String key) {
		KeyValue value = context.getHighCardinalityKeyValue(key);
		return (value != null) ? value.getValue() : null;
	}

	void clear() {
		this.events.clear();
		this.stopped.clear();
	}

	/** An observation registry that records into a {@link RecordingObservationHandler} bean. */
	@Configuration(proxyBeanMethods = false)
	static class Registry {

		@Bean
		RecordingObservationHandler recordingObservationHandler() {
			return new RecordingObservationHandler();
		}

		@Bean
		ObservationRegistry observationRegistry(RecordingObservationHandler handler) {
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig().observationHandler(handler);
			return registry;
		}

	}

}

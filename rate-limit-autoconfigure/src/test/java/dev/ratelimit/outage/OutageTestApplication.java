package dev.ratelimit.outage;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.ManualTimeSource;

/**
 * A web application whose routes are limited by policies of every failure mode,
 * on the Redis backend. Its nested components are registered as members.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
class OutageTestApplication {

	@Bean
	ManualTimeSource rateLimitTimeSource() {
		return new ManualTimeSource();
	}

	@Bean
	SimpleMeterRegistry meterRegistry() {
		return new SimpleMeterRegistry();
	}

	@Bean
	RecordingListener recordingListener() {
		return new RecordingListener();
	}

	@RestController
	static class Endpoints {

		@GetMapping({ "/open", "/closed", "/local", "/shadow" })
		Map<String, String> ok() {
			return Map.of("ok", "yes");
		}

	}

	/**
	 * Records what the limiter reports.
	 */
	static class RecordingListener implements LimitListener {

		final List<String> events = new ArrayList<>();

		@Override
		public synchronized void decided(Limit limit, boolean allowed, DecisionSource source) {
			this.events.add(source + " " + limit.name() + " " + (allowed ? "allowed" : "denied"));
		}

		@Override
		public synchronized void storeAvailabilityChanged(LimitKind kind, boolean available, RuntimeException cause) {
			if (kind == LimitKind.RATE_LIMIT) {
				this.events.add(available ? "backend up" : "backend down");
			}
		}

		synchronized List<String> events() {
			return List.copyOf(this.events);
		}

		synchronized void clear() {
			this.events.clear();
		}

	}

}

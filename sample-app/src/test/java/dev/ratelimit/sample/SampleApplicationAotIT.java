package dev.ratelimit.sample;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.support.AppProcess;
import dev.ratelimit.support.SampleTour;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The sample app as the build packages it, processed ahead of time by the
 * Spring Boot Maven plugin ({@code process-aot}), started with
 * {@code -Dspring.aot.enabled=true} and toured over HTTP: annotations, plans,
 * the failed-login limit, the budget, the stream, the route rule and the
 * actuator answer as the same jar does without AOT. Runs after the jar is
 * built (Failsafe, in {@code mvn verify}).
 */
class SampleApplicationAotIT {

	static final Path JAR = Path.of("target", "sample-app-0.1.0-SNAPSHOT.jar");

	@Test
	void theTourAnswersAlikeWithAndWithoutAot() {
		List<String> withAot = SampleTour.takeOn(JAR, "SampleApplication", true);
		List<String> withoutAot = SampleTour.takeOn(JAR, "SampleApplication", false);
		assertThat(withAot).isEqualTo(withoutAot);
	}

	@Test
	void aProcessedAppRefusesABackendItWasNotProcessedWith() {
		// Processed with the default memory backend: started asking for Redis, it must not count in memory quietly.
		assertThatIllegalStateException()
			.isThrownBy(() -> AppProcess.start(JAR, List.of("-Dspring.aot.enabled=true"),
					List.of("--rate-limit.backend=redis"), Duration.ofMinutes(2)).close())
			.withMessageContaining("Exited with 1 before it served")
			.withMessageContaining("rate-limit.backend is redis, but the application was processed with the memory "
					+ "backend");
	}

}

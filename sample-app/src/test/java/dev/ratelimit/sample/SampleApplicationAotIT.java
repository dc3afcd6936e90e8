package dev.ratelimit.sample;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.support.AppProcess;
import dev.ratelimit.support.SampleTour;
import dev.ratelimit.support.TestHttp;

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
		List<String> withAot = tour(List.of("-Dspring.aot.enabled=true"), true);
		List<String> withoutAot = tour(List.of(), false);
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

	static List<String> tour(List<String> jvmOptions, boolean aot) {
		try (AppProcess app = AppProcess.start(JAR, jvmOptions, List.of(), Duration.ofMinutes(2))) {
			// Spring Boot says which context it starts: the generated one, or one built by reflection.
			if (aot) {
				assertThat(app.output()).contains("Starting AOT-processed SampleApplication");
			}
			else {
				assertThat(app.output()).contains("Starting SampleApplication").doesNotContain("AOT-processed");
			}
			List<String> transcript = SampleTour.take(TestHttp.on(app.port()));
			assertThat(app.output()).doesNotContain(" ERROR ");
			return transcript;
		}
	}

}

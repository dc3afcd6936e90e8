package dev.ratelimit.sample.reactive;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.support.SampleTour;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive sample app as the build packages it, processed ahead of time by the
 * Spring Boot Maven plugin ({@code process-aot}), started with
 * {@code -Dspring.aot.enabled=true} and toured over HTTP: annotations, plans,
 * the failed-login limit, the budget, the stream, the route rule and the
 * actuator answer as the same jar does without AOT. Runs after the jar is
 * built (Failsafe, in {@code mvn verify}).
 */
class ReactiveSampleAotIT {

	static final Path JAR = Path.of("target", "sample-reactive-app-0.1.0-SNAPSHOT.jar");

	@Test
	void theTourAnswersAlikeWithAndWithoutAot() {
		List<String> withAot = SampleTour.takeOn(JAR, "ReactiveSampleApplication", true);
		List<String> withoutAot = SampleTour.takeOn(JAR, "ReactiveSampleApplication", false);
		assertThat(withAot).isEqualTo(withoutAot);
	}

}

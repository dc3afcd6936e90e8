package dev.ratelimit.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.server.PathContainer;
import org.springframework.mock.env.MockEnvironment;
import org.springframework.web.util.pattern.PathPattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where the management endpoints are behind the route filter, for the route
 * rules' caps to leave them out, and what the start-up report says of a rule
 * whose caps would cover them.
 */
@ExtendWith(OutputCaptureExtension.class)
class ManagementPathsTests {

	private final MockEnvironment environment = new MockEnvironment();

	private final RateLimitProperties properties = new RateLimitProperties();

	@Test
	void theActuatorsBasePathIsLeftOutOfTheCapsByDefault() {
		PathPattern uncapped = ManagementPaths.of(this.environment, this.properties, true).uncapped();
		assertThat(uncapped).isNotNull();
		assertThat(uncapped.getPatternString()).isEqualTo("/actuator/**");
		assertThat(uncapped.matches(PathContainer.parsePath("/actuator/health/readiness"))).isTrue();
		assertThat(uncapped.matches(PathContainer.parsePath("/actuators"))).isFalse();
	}

	@Test
	void aConfiguredBasePathAndTheDispatcherServletsPathAreFollowed() {
		this.environment.setProperty("management.endpoints.web.base-path", "manage/");
		this.environment.setProperty("spring.mvc.servlet.path", "/app/");
		assertThat(ManagementPaths.of(this.environment, this.properties, true).uncapped())
			.hasToString("/app/manage/**");
		// WebFlux serves them at the base path within the application: spring.webflux.base-path is its context path.
		assertThat(ManagementPaths.of(this.environment, this.properties, false).uncapped()).hasToString("/manage/**");
	}

	@Test
	void endpointsOnAPortOfTheirOwnLeaveTheApplicationsPathsCapped() {
		this.environment.setProperty("server.port", "8080");
		this.environment.setProperty("management.server.port", "8081");
		ManagementPaths paths = ManagementPaths.of(this.environment, this.properties, true);
		assertThat(paths.uncapped()).isNull();
		assertThat(paths.note("/**", List.of("overload"))).isEmpty();
	}

	@Test
	void endpointsOnTheApplicationsPortNamedAsSuchAreLeftOut() {
		this.environment.setProperty("server.port", "8443");
		this.environment.setProperty("management.server.port", "8443");
		assertThat(ManagementPaths.of(this.environment, this.properties, true).uncapped()).hasToString("/actuator/**");
	}

	@Test
	void capManagementEndpointsCapsThemAndWarns(CapturedOutput output) {
		this.properties.getFilter().setCapManagementEndpoints(true);
		ManagementPaths paths = ManagementPaths.of(this.environment, this.properties, true);
		assertThat(paths.uncapped()).isNull();
		assertThat(paths.note("/**", List.of("overload"))).isEqualTo(" (management endpoints included)");
		assertThat(output).contains("Route rule /** caps the management endpoints (/actuator/**) with [overload] as "
				+ "rate-limit.filter.cap-management-endpoints=true asks: a full cap, or an adaptive cap shedding, "
				+ "refuses the health probe");
	}

	@Test
	void endpointsAtTheRootCannotBeToldFromTheApplicationsAndAreWarnedOf(CapturedOutput output) {
		this.environment.setProperty("management.endpoints.web.base-path", "/");
		ManagementPaths paths = ManagementPaths.of(this.environment, this.properties, true);
		assertThat(paths.uncapped()).isNull();
		assertThat(paths.note("/**", List.of("overload"))).isEqualTo(" (management endpoints included)");
		assertThat(output).contains("Route rule /** caps the management endpoints (/) with [overload], which are "
				+ "served at the root");
	}

	@Test
	void theReportNotesTheExemptionOnlyOnARuleThatWouldCoverThem() {
		ManagementPaths paths = ManagementPaths.of(this.environment, this.properties, true);
		assertThat(paths.note("/**", List.of("overload")))
			.isEqualTo(" (not the management endpoints under /actuator/**: rate-limit.filter.cap-management-endpoints)");
		assertThat(paths.note("/api/**", List.of("overload"))).isEmpty();
		assertThat(paths.note("/**", List.of())).isEmpty();
	}

}

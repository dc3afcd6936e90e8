package dev.ratelimit.sample;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A bad configuration stops the real application with the failure analyzer's
 * message, not a stack trace at the first request.
 */
@ExtendWith(OutputCaptureExtension.class)
class SampleApplicationStartupFailureTests {

	@Test
	void nonPositiveCapacityStopsStartupNamingTheProperty(CapturedOutput output) {
		assertThatException().isThrownBy(() -> SpringApplication.run(SampleApplication.class, "--server.port=0",
				"--rate-limit.policies.agent-runs.capacity=0"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property rate-limit.policies.agent-runs.capacity with value '0' is invalid: must be positive")
			.contains("Update rate-limit.policies.agent-runs.capacity in your configuration.");
	}

	@Test
	void malformedRefillStopsStartupWithBootsBindingReport(CapturedOutput output) {
		assertThatException().isThrownBy(() -> SpringApplication.run(SampleApplication.class, "--server.port=0",
				"--rate-limit.policies.agent-runs.refill=1 per second"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property: rate-limit.policies.agent-runs.refill")
			.contains("Value: \"1 per second\"")
			.contains("'1 per second' is not a refill rate");
	}

	@Test
	void unknownPolicyInARouteRuleStopsStartupNamingTheProperty(CapturedOutput output) {
		assertThatException().isThrownBy(() -> SpringApplication.run(SampleApplication.class, "--server.port=0",
				"--rate-limit.routes[0].pattern=/api/**", "--rate-limit.routes[0].policies=per-ipp"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property rate-limit.routes[0].policies with value 'per-ipp' is invalid");
	}

}

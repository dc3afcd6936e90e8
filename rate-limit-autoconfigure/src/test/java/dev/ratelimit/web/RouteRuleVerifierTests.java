package dev.ratelimit.web;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.web.servlet.MockMvc;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A route rule whose pattern matches no request mapping is reported at
 * start-up; rules that match, through variables or wildcards, are not.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(classes = WebTestApplication.class,
		properties = { "rate-limit.policies.by-principal.capacity=1", "rate-limit.policies.by-principal.refill=1/1h",
				"rate-limit.policies.any.capacity=10", "rate-limit.policies.any.refill=10/1s",
				"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=any",
				"rate-limit.routes[1].pattern=/apii/**", "rate-limit.routes[1].policies=any",
				"rate-limit.routes[2].pattern=/b*", "rate-limit.routes[2].policies=any" })
@AutoConfigureMockMvc
class RouteRuleVerifierTests {

	@Autowired
	MockMvc mvc;

	@Test
	void ruleMatchingNoMappingIsWarnedAbout(CapturedOutput output) {
		assertThat(output).contains("Route rule rate-limit.routes[1] (/apii/**) matches no request mapping");
		assertThat(output).doesNotContain("rate-limit.routes[0] (/api/**) matches no");
		assertThat(output).doesNotContain("rate-limit.routes[2] (/b*) matches no");
	}

}

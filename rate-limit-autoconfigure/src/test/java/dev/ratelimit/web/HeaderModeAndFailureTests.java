package dev.ratelimit.web;


import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;

import dev.ratelimit.support.RefusingRedis;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The header switches, and the answer of policies in each failure mode when
 * Redis refuses connections.
 */
class HeaderModeAndFailureTests {

	/** Spring Security is on the test classpath for SpringSecurityTests only. */
	static final String NO_SECURITY = "spring.autoconfigure.exclude="
			+ "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration";

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withUserConfiguration(WebTestApplication.class)
		.withPropertyValues(NO_SECURITY, "rate-limit.policies.by-principal.capacity=1",
				"rate-limit.policies.by-principal.refill=1/1h", "rate-limit.policies.tiny.capacity=1",
				"rate-limit.policies.tiny.refill=1/1h", "rate-limit.policies.tiny.visibility=public",
				"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=tiny");

	@Test
	void legacyModeSendsOnlyTheXRateLimitTrio() {
		run("legacy", (mvc) -> {
			mvc.perform(get("/api/open"))
				.andExpect(status().isOk())
				.andExpect(header().string("X-RateLimit-Limit", "1"))
				.andExpect(header().string("X-RateLimit-Remaining", "0"))
				.andExpect(header().string("X-RateLimit-Reset", "3600"))
				.andExpect(header().doesNotExist("RateLimit"))
				.andExpect(header().doesNotExist("RateLimit-Policy"));
		});
	}

	@Test
	void bothModeSendsBothSets() {
		run("both", (mvc) -> {
			mvc.perform(get("/api/open"))
				.andExpect(header().string("X-RateLimit-Remaining", "0"))
				.andExpect(header().string("RateLimit", "\"tiny\";r=0;t=3600"));
		});
	}

	@Test
	void noneModeSendsNoFieldsButKeepsRetryAfterOn429() {
		run("none", (mvc) -> {
			mvc.perform(get("/api/open"))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit"))
				.andExpect(header().doesNotExist("X-RateLimit-Limit"));
			mvc.perform(get("/api/open"))
				.andExpect(status().isTooManyRequests())
				.andExpect(header().string("Retry-After", "3600"))
				.andExpect(header().doesNotExist("RateLimit"));
		});
	}

	@Test
	void failClosedPolicyAnswers503WhenRedisRefusesConnections() {
		this.contextRunner.withUserConfiguration(DeadRedis.class)
			.withPropertyValues("rate-limit.backend=redis", "rate-limit.policies.tiny.failure-mode=closed")
			.run((context) -> mockMvc(context).perform(get("/api/open"))
				.andExpect(status().isServiceUnavailable())
				.andExpect(header().string("Retry-After", "1"))
				.andExpect(header().string("Cache-Control", "no-store"))
				.andExpect(jsonPath("$.type")
					.value("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"))
				.andExpect(jsonPath("$.status").value(503)));
	}

	@Test
	void policyWithTheDefaultFailureModeKeepsLimitingInMemoryWhenRedisRefusesConnections() {
		// No failure-mode set: local, so the outage is decided here, with the local limiter's fields.
		this.contextRunner.withUserConfiguration(DeadRedis.class)
			.withPropertyValues("rate-limit.backend=redis")
			.run((context) -> {
				MockMvc mvc = mockMvc(context);
				mvc.perform(get("/api/open"))
					.andExpect(status().isOk())
					.andExpect(header().string("RateLimit", "\"tiny\";r=0;t=3600"));
				mvc.perform(get("/api/open"))
					.andExpect(status().isTooManyRequests())
					.andExpect(header().string("Retry-After", "3600"));
			});
	}

	@Test
	void failOpenPolicyServesTheRequestWhenRedisRefusesConnections() {
		this.contextRunner.withUserConfiguration(DeadRedis.class)
			.withPropertyValues("rate-limit.backend=redis", "rate-limit.policies.tiny.failure-mode=open")
			.run((context) -> {
				MockMvc mvc = mockMvc(context);
				for (int i = 0; i < 3; i++) {
					mvc.perform(get("/api/open")).andExpect(status().isOk()).andExpect(header().doesNotExist("RateLimit"));
				}
			});
	}

	private void run(String mode, ThrowingConsumer<MockMvc> test) {
		this.contextRunner.withPropertyValues("rate-limit.headers.mode=" + mode)
			.run((context) -> test.accept(mockMvc(context)));
	}

	private static MockMvc mockMvc(AssertableWebApplicationContext context) {
		FilterRegistrationBean<?> registration = context.getBean("rateLimitFilterRegistration",
				FilterRegistrationBean.class);
		return MockMvcBuilders.webAppContextSetup(context).addFilters(registration.getFilter()).build();
	}

	@FunctionalInterface
	interface ThrowingConsumer<T> {

		void accept(T value) throws Exception;

	}

	@Configuration(proxyBeanMethods = false)
	static class DeadRedis {

		@Bean
		LettuceConnectionFactory redisConnectionFactory() {
			return RefusingRedis.connectionFactory();
		}

	}

}

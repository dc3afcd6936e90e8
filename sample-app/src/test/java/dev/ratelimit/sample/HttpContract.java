package dev.ratelimit.sample;

import java.util.List;
import java.util.regex.Pattern;

import com.jayway.jsonpath.JsonPath;

import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Assertions on the HTTP contract of the brief, over answers of the running
 * sample app (called with {@link dev.ratelimit.support.TestHttp}): status,
 * Retry-After, Cache-Control, the problem body and the Structured Field syntax
 * of the RateLimit fields.
 */
final class HttpContract {

	/** sf-list of sf-string items with integer parameters, as in draft-ietf-httpapi-ratelimit-headers-11. */
	private static final Pattern POLICY_FIELD = Pattern
		.compile("\"[A-Za-z0-9._-]+\";q=\\d+;w=\\d+(, \"[A-Za-z0-9._-]+\";q=\\d+;w=\\d+)*");

	private static final Pattern STATE_FIELD = Pattern
		.compile("\"[A-Za-z0-9._-]+\";r=\\d+;t=\\d+(, \"[A-Za-z0-9._-]+\";r=\\d+;t=\\d+)*");

	private HttpContract() {
	}

	static void assertAllowed(Answer response, String policyField, String stateField) {
		assertThat(response.status()).isEqualTo(200);
		assertRateLimitFields(response, policyField, stateField);
		assertThat(response.headers().firstValue("Retry-After")).isEmpty();
	}

	static void assertRateLimitFields(Answer response, String policyField, String stateField) {
		String policy = response.headers().firstValue("RateLimit-Policy").orElseThrow();
		String state = response.headers().firstValue("RateLimit").orElseThrow();
		assertThat(policy).matches(POLICY_FIELD).isEqualTo(policyField);
		assertThat(state).matches(STATE_FIELD).isEqualTo(stateField);
	}

	static void assertTooManyRequests(Answer response, String retryAfter, List<String> violated,
			String instance) {
		assertProblem(response, 429, "quota-exceeded", "Too Many Requests", retryAfter, instance);
		assertThat((List<String>) JsonPath.read(response.body(), "$.violated-policies")).isEqualTo(violated);
	}

	/**
	 * Asserts a refusal by capacity the caller is not told about: the service's
	 * condition, answered 503 with no limit named.
	 */
	static void assertReducedCapacity(Answer response, String retryAfter, String instance) {
		assertProblem(response, 503, "temporary-reduced-capacity", "Service Unavailable", retryAfter, instance);
		assertThat(response.body()).doesNotContain("violated-policies").doesNotContain("provider");
	}

	/**
	 * Asserts a refusal's status, header fields and the problem body's common
	 * members.
	 */
	private static void assertProblem(Answer response, int status, String problemType, String title,
			String retryAfter, String instance) {
		assertThat(response.status()).isEqualTo(status);
		assertThat(response.headers().firstValue("Retry-After")).hasValue(retryAfter);
		assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		String body = response.body();
		assertThat((String) JsonPath.read(body, "$.type"))
			.isEqualTo("https://iana.org/assignments/http-problem-types#" + problemType);
		assertThat((String) JsonPath.read(body, "$.title")).isEqualTo(title);
		assertThat((Integer) JsonPath.read(body, "$.status")).isEqualTo(status);
		assertThat((String) JsonPath.read(body, "$.detail")).contains("retry after " + retryAfter + " s");
		assertThat((String) JsonPath.read(body, "$.instance")).isEqualTo(instance);
	}

}

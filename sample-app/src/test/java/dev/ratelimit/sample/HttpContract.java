package dev.ratelimit.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.regex.Pattern;

import com.jayway.jsonpath.JsonPath;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Real HTTP calls against the running sample app, and assertions on the HTTP
 * contract of the brief: status, Retry-After, Cache-Control, the problem body
 * and the Structured Field syntax of the RateLimit fields.
 */
final class HttpContract {

	/** sf-list of sf-string items with integer parameters, as in draft-ietf-httpapi-ratelimit-headers-11. */
	private static final Pattern POLICY_FIELD = Pattern
		.compile("\"[A-Za-z0-9._-]+\";q=\\d+;w=\\d+(, \"[A-Za-z0-9._-]+\";q=\\d+;w=\\d+)*");

	private static final Pattern STATE_FIELD = Pattern
		.compile("\"[A-Za-z0-9._-]+\";r=\\d+;t=\\d+(, \"[A-Za-z0-9._-]+\";r=\\d+;t=\\d+)*");

	private final HttpClient client = HttpClient.newHttpClient();

	private final int port;

	HttpContract(int port) {
		this.port = port;
	}

	HttpResponse<String> post(String path, String... headers) throws IOException, InterruptedException {
		return send(HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString("{}")), headers);
	}

	HttpResponse<String> postJson(String path, String json, String... headers)
			throws IOException, InterruptedException {
		return send(HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString(json)), headers);
	}

	HttpResponse<String> get(String path, String... headers) throws IOException, InterruptedException {
		return send(HttpRequest.newBuilder(uri(path)).GET(), headers);
	}

	HttpResponse<String> delete(String path, String... headers) throws IOException, InterruptedException {
		return send(HttpRequest.newBuilder(uri(path)).DELETE(), headers);
	}

	private HttpResponse<String> send(HttpRequest.Builder builder, String... headers)
			throws IOException, InterruptedException {
		if (headers.length > 0) {
			builder.headers(headers);
		}
		builder.header("Content-Type", "application/json");
		return this.client.send(builder.build(), HttpResponse.BodyHandlers.ofString());
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	static void assertAllowed(HttpResponse<String> response, String policyField, String stateField) {
		assertThat(response.statusCode()).isEqualTo(200);
		assertRateLimitFields(response, policyField, stateField);
		assertThat(response.headers().firstValue("Retry-After")).isEmpty();
	}

	static void assertRateLimitFields(HttpResponse<String> response, String policyField, String stateField) {
		String policy = response.headers().firstValue("RateLimit-Policy").orElseThrow();
		String state = response.headers().firstValue("RateLimit").orElseThrow();
		assertThat(policy).matches(POLICY_FIELD).isEqualTo(policyField);
		assertThat(state).matches(STATE_FIELD).isEqualTo(stateField);
	}

	static void assertTooManyRequests(HttpResponse<String> response, String retryAfter, List<String> violated,
			String instance) {
		assertThat(response.statusCode()).isEqualTo(429);
		assertThat(response.headers().firstValue("Retry-After")).hasValue(retryAfter);
		assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		String body = response.body();
		assertThat((String) JsonPath.read(body, "$.type"))
			.isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
		assertThat((String) JsonPath.read(body, "$.title")).isEqualTo("Too Many Requests");
		assertThat((Integer) JsonPath.read(body, "$.status")).isEqualTo(429);
		assertThat((String) JsonPath.read(body, "$.detail")).contains("retry after " + retryAfter + " s");
		assertThat((String) JsonPath.read(body, "$.instance")).isEqualTo(instance);
		assertThat((List<String>) JsonPath.read(body, "$.violated-policies")).isEqualTo(violated);
	}

	/**
	 * Asserts a refusal by capacity the caller is not told about: the service's
	 * condition, answered 503 with no limit named.
	 */
	static void assertReducedCapacity(HttpResponse<String> response, String retryAfter, String instance) {
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.headers().firstValue("Retry-After")).hasValue(retryAfter);
		assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		String body = response.body();
		assertThat((String) JsonPath.read(body, "$.type"))
			.isEqualTo("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity");
		assertThat((String) JsonPath.read(body, "$.title")).isEqualTo("Service Unavailable");
		assertThat((Integer) JsonPath.read(body, "$.status")).isEqualTo(503);
		assertThat((String) JsonPath.read(body, "$.detail")).contains("retry after " + retryAfter + " s");
		assertThat((String) JsonPath.read(body, "$.instance")).isEqualTo(instance);
		assertThat(body).doesNotContain("violated-policies").doesNotContain("provider");
	}

}

package dev.ratelimit.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationContext;

/**
 * Real HTTP/1.1 calls to a test server with the JDK's client: the one HTTP
 * client of the tests, whatever the stack of the server (Tomcat, Reactor
 * Netty, a gateway) or the module (the starter's tests, the samples', through
 * the test jar). Answers keep every header field and the body as text.
 */
public final class TestHttp {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final HttpClient CLIENT = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private final String base;

	private TestHttp(String base) {
		this.base = base;
	}

	/**
	 * A client of a server on a local port.
	 * @param port the port
	 * @return the client
	 */
	public static TestHttp on(int port) {
		return new TestHttp("http://127.0.0.1:" + port);
	}

	/**
	 * A client of a running application's server.
	 * @param context the application, started on a port
	 * @return the client
	 */
	public static TestHttp of(ApplicationContext context) {
		return on(((WebServerApplicationContext) context).getWebServer().getPort());
	}

	/**
	 * Writes a value as JSON, for a request's body.
	 * @param value the value, such as a record
	 * @return its JSON text
	 */
	public static String json(Object value) {
		return JSON.writeValueAsString(value);
	}

	/**
	 * Sends a GET.
	 * @param path the path, with its query
	 * @param headers header names and values, alternating
	 * @return the answer
	 */
	public Answer get(String path, String... headers) {
		return send("GET", path, null, headers);
	}

	/**
	 * Sends a POST.
	 * @param path the path
	 * @param body the body, or {@code null} for none
	 * @param headers header names and values, alternating
	 * @return the answer
	 */
	public Answer post(String path, @Nullable String body, String... headers) {
		return send("POST", path, body, headers);
	}

	/**
	 * Sends a POST with a JSON body ({@code Content-Type: application/json}).
	 * @param path the path
	 * @param json the body
	 * @param headers further header names and values, alternating
	 * @return the answer
	 */
	public Answer postJson(String path, String json, String... headers) {
		String[] all = Arrays.copyOf(headers, headers.length + 2);
		all[headers.length] = "Content-Type";
		all[headers.length + 1] = "application/json";
		return send("POST", path, json, all);
	}

	/**
	 * Sends a DELETE.
	 * @param path the path
	 * @param headers header names and values, alternating
	 * @return the answer
	 */
	public Answer delete(String path, String... headers) {
		return send("DELETE", path, null, headers);
	}

	/**
	 * Sends a request and waits for its answer.
	 * @param method the HTTP method
	 * @param path the path, with its query
	 * @param body the body, or {@code null} for none
	 * @param headers header names and values, alternating
	 * @return the answer
	 */
	public Answer send(String method, String path, @Nullable String body, String... headers) {
		try {
			return answer(CLIENT.send(request(method, path, body, headers), HttpResponse.BodyHandlers.ofString()));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(method + " " + path + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted during " + method + " " + path, ex);
		}
	}

	/**
	 * Sends a request without waiting for its answer: for a call held in
	 * flight while others are made.
	 * @param method the HTTP method
	 * @param path the path, with its query
	 * @param headers header names and values, alternating
	 * @return the answer, once it arrives
	 */
	public CompletableFuture<Answer> sendAsync(String method, String path, String... headers) {
		return CLIENT.sendAsync(request(method, path, null, headers), HttpResponse.BodyHandlers.ofString())
			.thenApply(TestHttp::answer);
	}

	private HttpRequest request(String method, String path, @Nullable String body, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.base + path))
			.timeout(Duration.ofSeconds(30))
			.method(method, (body != null) ? HttpRequest.BodyPublishers.ofString(body)
					: HttpRequest.BodyPublishers.noBody());
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return request.build();
	}

	private static Answer answer(HttpResponse<String> response) {
		return new Answer(response.statusCode(), response.headers(), response.body());
	}

	/**
	 * An answer.
	 *
	 * @param status the status code
	 * @param headers the header fields
	 * @param body the body, as text
	 */
	public record Answer(int status, HttpHeaders headers, String body) {

		/**
		 * Returns a header field's first value.
		 * @param name the field's name
		 * @return the value, or {@code null} when absent
		 */
		public @Nullable String header(String name) {
			return this.headers.firstValue(name).orElse(null);
		}

		/** @return the {@code RateLimit} field, or {@code null} */
		public @Nullable String rateLimit() {
			return header("RateLimit");
		}

		/** @return the {@code RateLimit-Policy} field, or {@code null} */
		public @Nullable String rateLimitPolicy() {
			return header("RateLimit-Policy");
		}

		/** @return the {@code Retry-After} field, or {@code null} */
		public @Nullable String retryAfter() {
			return header("Retry-After");
		}

		/** @return the {@code Content-Type} field, or {@code null} */
		public @Nullable String contentType() {
			return header("Content-Type");
		}

		/** @return the body read as JSON */
		public JsonNode json() {
			return JSON.readTree(this.body);
		}

	}

}

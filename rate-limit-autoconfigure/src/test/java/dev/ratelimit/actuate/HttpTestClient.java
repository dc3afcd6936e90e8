package dev.ratelimit.actuate;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Real HTTP calls to a test server, with JSON bodies read as trees.
 */
final class HttpTestClient {

	private static final JsonMapper json = JsonMapper.builder().build();

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final int port;

	/**
	 * A client of a running application's server.
	 * @param context the application, started on a port
	 * @return its client
	 */
	static HttpTestClient of(ConfigurableApplicationContext context) {
		return new HttpTestClient(((WebServerApplicationContext) context).getWebServer().getPort());
	}

	HttpTestClient(int port) {
		this.port = port;
	}

	Response get(String path, String... headers) {
		return send("GET", path, headers);
	}

	Response post(String path, String... headers) {
		return send("POST", path, headers);
	}

	Response delete(String path, String... headers) {
		return send("DELETE", path, headers);
	}

	/**
	 * Sends a request without a body.
	 * @param method the HTTP method
	 * @param path the path on the test server
	 * @param headers header names and values, alternating
	 * @return the response
	 */
	Response send(String method, String path, String... headers) {
		return sendBody(method, path, null, headers);
	}

	/**
	 * Sends a JSON body with POST.
	 * @param path the path on the test server
	 * @param json the body
	 * @return the response
	 */
	Response postJson(String path, String json) {
		return sendBody("POST", path, json, "Content-Type", "application/json");
	}

	private Response sendBody(String method, String path, String body, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(10))
			.method(method, (body != null) ? HttpRequest.BodyPublishers.ofString(body)
					: HttpRequest.BodyPublishers.noBody());
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		try {
			HttpResponse<String> response = this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
			return new Response(response.statusCode(), response.headers().firstValue("RateLimit").orElse(null),
					response.body());
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
	 * A response.
	 *
	 * @param status the status code
	 * @param rateLimit the {@code RateLimit} header, or {@code null}
	 * @param body the body
	 */
	record Response(int status, String rateLimit, String body) {

		JsonNode json() {
			return json.readTree(this.body);
		}

	}

	/**
	 * Finds the element of a JSON array whose field has a value.
	 * @param array the array
	 * @param field the field
	 * @param value the value
	 * @return the element
	 * @throws AssertionError if none has it
	 */
	static JsonNode element(JsonNode array, String field, String value) {
		for (JsonNode element : array) {
			if (value.equals(element.path(field).asString())) {
				return element;
			}
		}
		throw new AssertionError("No element with " + field + "=" + value + " in " + array);
	}

}

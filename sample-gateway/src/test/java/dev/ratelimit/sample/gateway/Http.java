package dev.ratelimit.sample.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * GETs over real HTTP with the JDK's client: nothing of Spring's between the
 * tests and the gateway.
 */
final class Http {

	private static final HttpClient CLIENT = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private Http() {
	}

	/**
	 * Sends a GET to the gateway.
	 * @param port the gateway's port
	 * @param path the path
	 * @return the answer, its body as text
	 */
	static HttpResponse<String> get(int port, String path) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.build();
		try {
			return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Returns a header field's first value.
	 * @param response the answer
	 * @param name the field's name
	 * @return the value, or {@code null}
	 */
	static String header(HttpResponse<?> response, String name) {
		return response.headers().firstValue(name).orElse(null);
	}

}

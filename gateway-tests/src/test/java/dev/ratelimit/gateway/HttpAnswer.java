package dev.ratelimit.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * One answer over real HTTP, from the JDK's client: nothing of Spring's
 * between the test and the gateway.
 *
 * @param status the status
 * @param headers the header fields
 * @param body the body
 */
public record HttpAnswer(int status, java.net.http.HttpHeaders headers, String body) {

	private static final HttpClient CLIENT = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	/**
	 * Sends a GET.
	 * @param port the server's port
	 * @param path the path
	 * @param headers header names and values, alternating
	 * @return the answer
	 */
	public static HttpAnswer get(int port, String path, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			// Generous: a gateway's first requests warm it up (seconds on a busy machine); a hang still fails.
			.timeout(Duration.ofSeconds(30));
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		try {
			HttpResponse<String> response = CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
			return new HttpAnswer(response.statusCode(), response.headers(), response.body());
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
	 * @param name the field's name
	 * @return the value, or {@code null}
	 */
	public String header(String name) {
		return this.headers.firstValue(name).orElse(null);
	}

}

package dev.ratelimit.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Real HTTP calls to a test server as a caller named by {@code X-User-Id},
 * with a given {@code Accept}: error pages are rendered by the container's
 * error dispatch, which MockMvc does not perform.
 */
final class BrowserCalls {

	/** What a browser sends when it navigates to a page. */
	static final String BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private final int port;

	BrowserCalls(int port) {
		this.port = port;
	}

	/**
	 * Sends a GET and waits for the answer.
	 * @param path the path on the test server
	 * @param user the caller
	 * @param accept the Accept header, none when empty
	 * @return the response
	 */
	HttpResponse<String> get(String path, String user, String accept) {
		try {
			return this.client.send(request(path, user, accept), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Sends a GET without waiting for the answer.
	 * @param path the path on the test server
	 * @param user the caller
	 * @return the response to come
	 */
	CompletableFuture<HttpResponse<String>> getAsync(String path, String user) {
		return this.client.sendAsync(request(path, user, ""), HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest request(String path, String user, String accept) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(10))
			.header("X-User-Id", user);
		if (!accept.isEmpty()) {
			request.header("Accept", accept);
		}
		return request.GET().build();
	}

}

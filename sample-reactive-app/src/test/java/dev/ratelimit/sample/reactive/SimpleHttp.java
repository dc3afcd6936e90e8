package dev.ratelimit.sample.reactive;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Plain HTTP/1.1 GETs against the sample on its random port, with the JDK's
 * client: what the benchmark's load generator and probe see.
 */
final class SimpleHttp {

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private final int port;

	SimpleHttp(int port) {
		this.port = port;
	}

	HttpResponse<String> get(String path) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(10))
			.GET()
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

}

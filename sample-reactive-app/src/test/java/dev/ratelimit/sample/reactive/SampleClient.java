package dev.ratelimit.sample.reactive;

import java.time.Duration;
import java.util.Map;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Calls a running reactive sample over real HTTP and keeps the whole answer.
 */
final class SampleClient {

	private final WebClient client;

	SampleClient(int port) {
		this.client = WebClient.builder().baseUrl("http://localhost:" + port).build();
	}

	Answer send(String method, String path, Map<String, String> headers) {
		return send(method, path, headers, null);
	}

	Answer send(String method, String path, Map<String, String> headers, Object json) {
		WebClient.RequestBodySpec request = this.client.method(HttpMethod.valueOf(method))
			.uri(path)
			.headers((into) -> headers.forEach(into::set));
		WebClient.RequestHeadersSpec<?> ready = (json != null)
				? request.contentType(MediaType.APPLICATION_JSON).bodyValue(json) : request;
		return ready
			.exchangeToMono((response) -> response.bodyToMono(String.class)
				.defaultIfEmpty("")
				.map((body) -> new Answer(response.statusCode().value(), response.headers().asHttpHeaders(), body)))
			.block(Duration.ofSeconds(10));
	}

	/**
	 * An answer.
	 *
	 * @param status its status
	 * @param headers its header fields
	 * @param body its body, empty when there is none
	 */
	record Answer(int status, HttpHeaders headers, String body) {

		String rateLimit() {
			return this.headers.getFirst("RateLimit");
		}

		String retryAfter() {
			return this.headers.getFirst("Retry-After");
		}

	}

}

package dev.ratelimit.web;

import java.util.List;

import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;

import dev.ratelimit.core.RateLimitBackendUnavailableException;

/**
 * The RFC 9457 {@code application/problem+json} body of a {@link Rejection},
 * and whether a client prefers an HTML page: the contract's body written once,
 * free of servlet and reactive types, for {@code ProblemResponses} (servlet)
 * and {@code ReactiveRejections} (WebFlux).
 */
public final class ProblemJson {

	private ProblemJson() {
	}

	/**
	 * Returns whether {@code Accept} field values prefer an HTML page to JSON,
	 * as a browser's do: {@code text/html} or {@code application/xhtml+xml}
	 * listed with a higher quality than any JSON type; wildcards count for
	 * neither, so an API client that accepts anything, a JSON type, or sends no
	 * {@code Accept} gets JSON.
	 * @param accept the request's {@code Accept} field values
	 * @return whether to answer with HTML
	 */
	public static boolean prefersHtml(List<String> accept) {
		if (accept.isEmpty()) {
			return false;
		}
		List<MediaType> types;
		try {
			types = MediaType.parseMediaTypes(accept);
		}
		catch (InvalidMediaTypeException ex) {
			return false;
		}
		double html = 0;
		double json = 0;
		for (MediaType type : types) {
			if (type.isWildcardType() || type.isWildcardSubtype()) {
				continue;
			}
			if (MediaType.TEXT_HTML.equalsTypeAndSubtype(type)
					|| MediaType.APPLICATION_XHTML_XML.equalsTypeAndSubtype(type)) {
				html = Math.max(html, type.getQualityValue());
			}
			else if ("json".equals(type.getSubtype()) || "json".equals(type.getSubtypeSuffix())) {
				json = Math.max(json, type.getQualityValue());
			}
		}
		return html > json;
	}

	/**
	 * Returns the RFC 9457 {@code application/problem+json} body of a
	 * rejection: the one body of the HTTP contract, whatever writes it.
	 * @param rejection the rejection
	 * @param instance the request's path, the problem's {@code instance}
	 * @return the body
	 */
	public static String body(Rejection rejection, String instance) {
		StringBuilder json = new StringBuilder(256);
		json.append("{\"type\":");
		string(json, rejection.type());
		json.append(",\"title\":");
		string(json, rejection.title());
		json.append(",\"status\":").append(rejection.status()).append(",\"detail\":");
		string(json, rejection.detail());
		json.append(",\"instance\":");
		string(json, instance);
		List<String> policies = rejection.policies();
		if (!policies.isEmpty()) {
			// A limit that refused was violated, as both problem types of the RateLimit draft name it; a
			// fail-closed policy whose store cannot answer was not.
			json.append((rejection.exception() instanceof RateLimitBackendUnavailableException) ? ",\"policies\":["
					: ",\"violated-policies\":[");
			for (int i = 0; i < policies.size(); i++) {
				if (i > 0) {
					json.append(',');
				}
				string(json, policies.get(i));
			}
			json.append(']');
		}
		return json.append('}').toString();
	}

	private static void string(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				default -> {
					if (c < 0x20 || c == 0x2028 || c == 0x2029) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}

}

package dev.ratelimit.web;

import java.util.function.BiConsumer;

import jakarta.servlet.http.HttpServletResponse;

/**
 * Sets header fields on a servlet response while it is not committed: once
 * its body streams, another thread (a settle when an asynchronous call ends)
 * must not touch the headers the container is sending.
 */
final class ServletHeaders {

	private ServletHeaders() {
	}

	/**
	 * Returns a setter of a response's header fields that does nothing once the
	 * response is committed.
	 * @param response the response
	 * @return the setter
	 */
	static BiConsumer<String, String> whileUncommitted(HttpServletResponse response) {
		return (name, value) -> {
			if (!response.isCommitted()) {
				response.setHeader(name, value);
			}
		};
	}

}

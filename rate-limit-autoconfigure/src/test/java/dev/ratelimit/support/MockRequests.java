package dev.ratelimit.support;

import org.springframework.test.web.servlet.request.RequestPostProcessor;

/**
 * What MockMvc tests set on a request: the one copy of each.
 */
public final class MockRequests {

	private MockRequests() {
	}

	/**
	 * Sends a request from a peer address, as a client or a proxy connects.
	 * @param address the peer's address, literal
	 * @return the post-processor setting it
	 */
	public static RequestPostProcessor peer(String address) {
		return (request) -> {
			request.setRemoteAddr(address);
			return request;
		};
	}

}

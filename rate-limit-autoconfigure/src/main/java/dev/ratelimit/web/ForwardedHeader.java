package dev.ratelimit.web;

/**
 * The request header in which trusted proxies name the client. Only one is
 * read: a proxy that appends to one header usually passes the other through
 * as the client wrote it, so reading both would let a client choose its
 * address.
 */
public enum ForwardedHeader {

	/**
	 * {@code X-Forwarded-For}: comma-separated addresses, each proxy appending
	 * the address of its own peer. The default: what most proxies and load
	 * balancers write.
	 */
	X_FORWARDED_FOR("X-Forwarded-For"),

	/**
	 * {@code Forwarded} (RFC 7239): comma-separated elements, each proxy appending
	 * one with a {@code for} parameter naming its peer.
	 */
	FORWARDED("Forwarded");

	private final String headerName;

	ForwardedHeader(String headerName) {
		this.headerName = headerName;
	}

	/**
	 * Returns the header's name.
	 * @return the name
	 */
	public String headerName() {
		return this.headerName;
	}

}

package dev.ratelimit.web;

/**
 * Which rate-limit header fields limited responses carry.
 */
public enum HeaderMode {

	/**
	 * {@code RateLimit-Policy} and {@code RateLimit} as in
	 * draft-ietf-httpapi-ratelimit-headers-11.
	 */
	IETF,

	/**
	 * The older {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and
	 * {@code X-RateLimit-Reset} trio.
	 */
	LEGACY,

	/**
	 * Both the IETF fields and the legacy trio.
	 */
	BOTH,

	/**
	 * No rate-limit fields; 429 and 503 responses still carry {@code Retry-After}.
	 */
	NONE

}

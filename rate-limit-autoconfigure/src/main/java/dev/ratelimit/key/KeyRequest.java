package dev.ratelimit.key;

import org.jspecify.annotations.Nullable;

/**
 * The parts of an incoming request that key expressions may read. Implemented
 * by the servlet integration; absent for calls that are not part of a web
 * request.
 */
public interface KeyRequest {

	/**
	 * Returns the first value of a request header.
	 * @param name the header name
	 * @return the value, or {@code null} when absent or blank
	 */
	@Nullable String header(String name);

	/**
	 * Returns the client's {@code ip} key: its address, named by the forwarded
	 * header only when trusted proxies sent it, masked to the configured prefix
	 * and in canonical text ({@code 192.0.2.1}, {@code 2001:db8:0:7::}).
	 * @return the key, or {@code null} when the peer address is not an IP address
	 */
	@Nullable String clientIp();

	/**
	 * Returns the client's full address, unmasked, resolved as for
	 * {@link #clientIp()}: what exemption ranges are matched against.
	 * @return the address, 4 or 16 bytes, or {@code null} when the peer address is not an IP address
	 */
	byte @Nullable [] clientAddress();

	/**
	 * Returns whether the authenticated caller has a role, as the servlet
	 * request's {@code isUserInRole} says (Spring Security answers it for its
	 * authorities, with or without the {@code ROLE_} prefix).
	 * @param role the role
	 * @return whether the caller has it; {@code false} for anonymous requests
	 */
	boolean isUserInRole(String role);

	/**
	 * Returns the authenticated principal's name.
	 * @return the name, or {@code null} for anonymous requests
	 */
	@Nullable String principalName();

	/**
	 * Returns the native request, exposed to expressions as {@code #request}.
	 * @return the request object
	 */
	Object nativeRequest();

}

package dev.ratelimit.key;

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
	String header(String name);

	/**
	 * Returns the client address, honouring {@code X-Forwarded-For} only from
	 * trusted proxies.
	 * @return the client IP
	 */
	String clientIp();

	/**
	 * Returns the authenticated principal's name.
	 * @return the name, or {@code null} for anonymous requests
	 */
	String principalName();

	/**
	 * Returns the native request, exposed to expressions as {@code #request}.
	 * @return the request object
	 */
	Object nativeRequest();

}

package dev.ratelimit.key;

import org.jspecify.annotations.Nullable;

/**
 * Root object of key expressions, so that built-in resolvers read as words:
 * {@code ip}, {@code principal}, {@code global} and {@code header('X-Api-Key')}.
 * Method arguments are variables ({@code #tenant}, {@code #p0}) and so is the
 * native request ({@code #request}).
 * <p>
 * Each resolver returns {@code null} when the value does not exist, which the
 * policy's missing-key action then handles.
 */
public final class KeyContext {

	/** The value of {@code global}: one bucket shared by every caller. */
	public static final String GLOBAL = "global";

	private final @Nullable KeyRequest request;

	/**
	 * Creates a context.
	 * @param request the current request, or {@code null} outside web requests
	 */
	public KeyContext(@Nullable KeyRequest request) {
		this.request = request;
	}

	/**
	 * Returns a request header's value.
	 * @param name the header name
	 * @return the value, or {@code null} when absent or outside a web request
	 */
	public @Nullable String header(String name) {
		return (this.request != null) ? this.request.header(name) : null;
	}

	/**
	 * Returns the client IP ({@code ip} in expressions): the client's address
	 * masked to the configured prefix, in canonical text.
	 * @return the address, or {@code null} outside a web request or when the peer
	 * address is not an IP address
	 */
	public @Nullable String getIp() {
		return (this.request != null) ? this.request.clientIp() : null;
	}

	/**
	 * Returns the current request, for what exemptions read.
	 * @return the request, or {@code null} outside a web request
	 */
	@Nullable KeyRequest request() {
		return this.request;
	}

	/**
	 * Returns the authenticated principal's name ({@code principal} in expressions).
	 * @return the name, or {@code null} when anonymous or outside a web request
	 */
	public @Nullable String getPrincipal() {
		return (this.request != null) ? this.request.principalName() : null;
	}

	/**
	 * Returns the constant key of a global limit ({@code global} in expressions).
	 * @return {@value #GLOBAL}
	 */
	public String getGlobal() {
		return GLOBAL;
	}

}

package dev.ratelimit.web;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.http.server.PathContainer;

import dev.ratelimit.key.KeyRequest;

/**
 * One web request and its response, as the shared web contract reads and
 * writes them: the request's method, path, headers, client address and
 * principal (what route rules match and key expressions read), its
 * {@link Disclosures}, and its response's status and header fields. Each
 * stack adapts its own request to it once per request, a servlet request or a
 * WebFlux exchange; everything a route rule decides and answers is then
 * written once, over this port ({@link RouteLimits}).
 * <p>
 * The client address is resolved by the application's
 * {@link ClientIpResolver}, with its trusted-proxy rules, the same on every
 * stack, at most once per request.
 */
public abstract class WebExchange implements KeyRequest {

	/** Writes header fields to an exchange's response: one instance, no function allocated per request. */
	static final HeaderWriter<WebExchange> FIELDS = HeaderWriter.committable(WebExchange::setHeader,
			WebExchange::isCommitted);

	private final ClientIpResolver ipResolver;

	private @Nullable Disclosures disclosures;

	private @Nullable String clientIp;

	private boolean clientIpResolved;

	private byte @Nullable [] clientAddress;

	private boolean clientAddressResolved;

	/**
	 * Creates the exchange.
	 * @param ipResolver resolves the client address
	 * @param disclosures the request's disclosures when the stack holds them already, else {@code null}
	 */
	protected WebExchange(ClientIpResolver ipResolver, @Nullable Disclosures disclosures) {
		this.ipResolver = ipResolver;
		this.disclosures = disclosures;
	}

	/**
	 * Returns the request's HTTP method.
	 * @return the method, upper case
	 */
	public abstract String method();

	/**
	 * Returns the path within the application as a string when parsing it would
	 * not change it: it holds no {@code %} (decoded before matching) and no
	 * {@code ;} (path parameters, removed before matching).
	 * @return the path, or {@code null} when only {@link #path()} gives it
	 */
	public abstract @Nullable String plainPath();

	/**
	 * Returns the path within the application, parsed (at most once per request).
	 * @return the path
	 */
	public abstract PathContainer path();

	/**
	 * Returns the first value of a request header.
	 * @param name the header name
	 * @return the value, or {@code null} when absent
	 */
	protected abstract @Nullable String firstHeader(String name);

	/**
	 * Returns every value of a request header.
	 * @param name the header name
	 * @return the values, in order; empty when absent
	 */
	protected abstract List<String> headerValues(String name);

	/**
	 * Returns the literal address of the peer that sent the request, never a
	 * host name (resolving one would block on DNS).
	 * @return the address, or {@code null} when the peer has no IP address
	 */
	protected abstract @Nullable String remoteAddress();

	/**
	 * Reads a request attribute.
	 * @param name the attribute's name
	 * @return its value, or {@code null}
	 */
	protected abstract @Nullable Object attribute(String name);

	/**
	 * Sets a request attribute.
	 * @param name the attribute's name
	 * @param value its value
	 */
	protected abstract void setAttribute(String name, Object value);

	/**
	 * Sets a response header field, replacing any of the same name.
	 * @param name the field's name
	 * @param value its value
	 */
	protected abstract void setHeader(String name, String value);

	/**
	 * Returns whether the response has begun: fields set now would not be sent.
	 * @return whether it is committed
	 */
	protected abstract boolean isCommitted();

	/**
	 * Returns the response's status as set so far.
	 * @return the status, or {@code -1} when none is set yet
	 */
	public abstract int status();

	/**
	 * Returns the request's disclosures, attached to the request first if it
	 * has none.
	 * @return its disclosures
	 */
	public final Disclosures disclosures() {
		Disclosures disclosures = this.disclosures;
		if (disclosures == null) {
			disclosures = Disclosures.from(attribute(Disclosures.ATTRIBUTE));
			if (disclosures == null) {
				disclosures = Disclosures.create(null);
				setAttribute(Disclosures.ATTRIBUTE, disclosures);
			}
			this.disclosures = disclosures;
		}
		return disclosures;
	}

	@Override
	public final @Nullable String header(String name) {
		String value = firstHeader(name);
		return (value == null || value.isBlank()) ? null : value;
	}

	@Override
	public final @Nullable String clientIp() {
		if (!this.clientIpResolved) {
			this.clientIp = this.ipResolver.resolve(remoteAddress(), forwarded());
			this.clientIpResolved = true;
		}
		return this.clientIp;
	}

	@Override
	public final byte @Nullable [] clientAddress() {
		// Asked once per address exemption: parsed once.
		if (!this.clientAddressResolved) {
			this.clientAddress = this.ipResolver.resolveAddress(remoteAddress(), forwarded());
			this.clientAddressResolved = true;
		}
		return this.clientAddress;
	}

	/** The trusted proxies' header, read only when the resolver is configured to. */
	private List<String> forwarded() {
		return this.ipResolver.readsHeader() ? headerValues(this.ipResolver.header().headerName()) : List.of();
	}

	/**
	 * Returns whether a string path is the one the parser would give, with no
	 * {@code %} nor {@code ;} in it.
	 * @param path a raw path
	 * @return whether it is plain
	 */
	protected static boolean isPlain(String path) {
		for (int i = 0; i < path.length(); i++) {
			char c = path.charAt(i);
			if (c == '%' || c == ';') {
				return false;
			}
		}
		return true;
	}

}

package dev.ratelimit.web;

import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.CidrRange;
import dev.ratelimit.core.IpAddresses;

/**
 * Finds the client address of a request and turns it into the {@code ip} key.
 * <p>
 * The forwarded header is honoured only when the direct peer is a trusted
 * proxy; it is then read from the right, skipping further trusted proxies, and
 * the first untrusted hop is the client. A spoofed header sent straight to the
 * application is therefore ignored, and so is anything a client prepends before
 * the first proxy. A hop that is not an address (garbage, {@code unknown}, an
 * obfuscated identifier, an empty element) ends the walk: the last hop that
 * could be trusted is the client.
 * <p>
 * The key is the client address with the bits after the configured prefix
 * cleared, in canonical text: dotted decimal for IPv4, RFC 5952 for IPv6
 * ({@code 2001:db8:0:7::} for every address of {@code 2001:db8:0:7::/64}). So
 * every spelling of one address, and every address a host picks from its
 * network, is one key. Trust is decided on the full address.
 */
public final class ClientIpResolver {

	private final CidrRange[] trustedProxies;

	private final ForwardedHeader header;

	private final int ipv4PrefixLength;

	private final int ipv6PrefixLength;

	/**
	 * Creates a resolver reading {@code X-Forwarded-For}, keying IPv4 clients by
	 * address and IPv6 clients by /64.
	 * @param trustedProxies the proxies whose header is believed
	 */
	public ClientIpResolver(List<CidrRange> trustedProxies) {
		this(trustedProxies, ForwardedHeader.X_FORWARDED_FOR, 32, 64);
	}

	/**
	 * Creates a resolver.
	 * @param trustedProxies the proxies whose header is believed
	 * @param header the header they name the client in
	 * @param ipv4PrefixLength the bits of an IPv4 client address kept in its key, 1 to 32
	 * @param ipv6PrefixLength the bits of an IPv6 client address kept in its key, 1 to 128
	 */
	public ClientIpResolver(List<CidrRange> trustedProxies, ForwardedHeader header, int ipv4PrefixLength,
			int ipv6PrefixLength) {
		if (ipv4PrefixLength < 1 || ipv4PrefixLength > 32) {
			throw new IllegalArgumentException("IPv4 prefix length must be 1 to 32: " + ipv4PrefixLength);
		}
		if (ipv6PrefixLength < 1 || ipv6PrefixLength > 128) {
			throw new IllegalArgumentException("IPv6 prefix length must be 1 to 128: " + ipv6PrefixLength);
		}
		this.trustedProxies = trustedProxies.toArray(new CidrRange[0]);
		this.header = header;
		this.ipv4PrefixLength = ipv4PrefixLength;
		this.ipv6PrefixLength = ipv6PrefixLength;
	}

	/**
	 * Returns the header trusted proxies name the client in.
	 * @return the header
	 */
	public ForwardedHeader header() {
		return this.header;
	}

	/**
	 * Returns whether the header is ever read: only when proxies are trusted.
	 * @return whether callers need to pass the header's values
	 */
	public boolean readsHeader() {
		return this.trustedProxies.length > 0;
	}

	/**
	 * Resolves the {@code ip} key of a request.
	 * @param remoteAddress the address of the direct peer, or {@code null} when unknown
	 * @param headerValues the values of every {@link #header()} line, in order
	 * @return the client's network in canonical text, or {@code null} when the
	 * peer address is not an IP address
	 */
	public @Nullable String resolve(@Nullable String remoteAddress, List<String> headerValues) {
		byte[] peer = peer(remoteAddress);
		if (peer == null || remoteAddress == null) {
			return null;
		}
		byte[] client = client(peer, headerValues);
		if (client == peer && peer.length == 4 && this.ipv4PrefixLength == 32 && remoteAddress.indexOf(':') < 0) {
			// A dotted quad the strict parser accepted is canonical already: no copy.
			return remoteAddress;
		}
		IpAddresses.mask(client, (client.length == 4) ? this.ipv4PrefixLength : this.ipv6PrefixLength);
		return IpAddresses.format(client);
	}

	/**
	 * Resolves a request's client address, unmasked: the direct peer, or the
	 * address the forwarded header names when trusted proxies sent it. What
	 * exemption ranges are matched against.
	 * @param remoteAddress the address of the direct peer, or {@code null} when unknown
	 * @param headerValues the values of every {@link #header()} line, in order
	 * @return the address, 4 or 16 bytes, or {@code null} when the peer address is not an IP address
	 */
	public byte @Nullable [] resolveAddress(@Nullable String remoteAddress, List<String> headerValues) {
		byte[] peer = peer(remoteAddress);
		return (peer != null) ? client(peer, headerValues) : null;
	}

	private static byte @Nullable [] peer(@Nullable String remoteAddress) {
		return (remoteAddress != null) ? IpAddresses.parseNode(remoteAddress, 0, remoteAddress.length()) : null;
	}

	private byte[] client(byte[] peer, List<String> headerValues) {
		return (readsHeader() && !headerValues.isEmpty() && isTrusted(peer)) ? walk(peer, headerValues) : peer;
	}

	private byte[] walk(byte[] peer, List<String> lines) {
		return (this.header == ForwardedHeader.FORWARDED) ? walkForwarded(peer, lines)
				: walkForwardedFor(peer, lines);
	}

	private byte[] walkForwardedFor(byte[] peer, List<String> lines) {
		byte[] client = peer;
		for (int l = lines.size() - 1; l >= 0; l--) {
			String line = lines.get(l);
			int end = line.length();
			while (true) {
				int comma = line.lastIndexOf(',', end - 1);
				int start = comma + 1;
				int stop = end;
				while (start < stop && isWhitespace(line.charAt(start))) {
					start++;
				}
				while (stop > start && isWhitespace(line.charAt(stop - 1))) {
					stop--;
				}
				byte[] hop = IpAddresses.parseNode(line, start, stop);
				if (hop == null) {
					return client;
				}
				client = hop;
				if (!isTrusted(hop)) {
					return client;
				}
				if (comma < 0) {
					break;
				}
				end = comma;
			}
		}
		return client;
	}

	private byte[] walkForwarded(byte[] peer, List<String> lines) {
		byte[] client = peer;
		for (int l = lines.size() - 1; l >= 0; l--) {
			List<String> hops = ForwardedElements.forValues(lines.get(l));
			if (hops == null) {
				return client;
			}
			for (int i = hops.size() - 1; i >= 0; i--) {
				String value = hops.get(i);
				byte[] hop = IpAddresses.parseNode(value, 0, value.length());
				if (hop == null) {
					return client;
				}
				client = hop;
				if (!isTrusted(hop)) {
					return client;
				}
			}
		}
		return client;
	}

	private boolean isTrusted(byte[] address) {
		for (CidrRange range : this.trustedProxies) {
			if (range.contains(address)) {
				return true;
			}
		}
		return false;
	}

	private static boolean isWhitespace(char c) {
		return c == ' ' || c == '\t';
	}

}

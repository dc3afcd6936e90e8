package dev.ratelimit.core;

import java.net.InetAddress;
import java.util.List;

/**
 * Finds the client address of a request. {@code X-Forwarded-For} is honoured
 * only when the direct peer is a trusted proxy; the header is then read from the
 * right, skipping further trusted proxies, and the first untrusted hop is the
 * client. A spoofed header sent straight to the application is therefore
 * ignored, and so is anything a client prepends before the first proxy.
 */
public final class ClientIpResolver {

	private final List<CidrRange> trustedProxies;

	/**
	 * Creates a resolver.
	 * @param trustedProxies the proxies whose {@code X-Forwarded-For} is believed
	 */
	public ClientIpResolver(List<CidrRange> trustedProxies) {
		this.trustedProxies = List.copyOf(trustedProxies);
	}

	/**
	 * Resolves the client address.
	 * @param remoteAddress the address of the direct peer
	 * @param forwardedFor the values of every {@code X-Forwarded-For} header, in order
	 * @return the client address
	 */
	public String resolve(String remoteAddress, List<String> forwardedFor) {
		if (this.trustedProxies.isEmpty() || forwardedFor.isEmpty() || !isTrusted(remoteAddress)) {
			return remoteAddress;
		}
		String client = remoteAddress;
		for (int h = forwardedFor.size() - 1; h >= 0; h--) {
			String[] hops = forwardedFor.get(h).split(",");
			for (int i = hops.length - 1; i >= 0; i--) {
				String hop = hops[i].strip();
				InetAddress address = IpAddresses.parse(hop);
				if (address == null) {
					// Garbage in the chain: stop at the last hop we could trust.
					return client;
				}
				client = hop;
				if (!isTrusted(address)) {
					return client;
				}
			}
		}
		return client;
	}

	private boolean isTrusted(String address) {
		InetAddress parsed = IpAddresses.parse(address);
		return parsed != null && isTrusted(parsed);
	}

	private boolean isTrusted(InetAddress address) {
		for (CidrRange range : this.trustedProxies) {
			if (range.contains(address)) {
				return true;
			}
		}
		return false;
	}

}

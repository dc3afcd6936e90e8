package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.core.CidrRange;
import dev.ratelimit.web.ClientIpResolver;

/**
 * Builds the client address resolver from {@code rate-limit.client-ip}, failing
 * with the exact property name on the first invalid value.
 */
final class ClientIpPropertiesBinder {

	private static final String PREFIX = "rate-limit.client-ip.";

	private ClientIpPropertiesBinder() {
	}

	static ClientIpResolver bind(RateLimitProperties.ClientIp properties) {
		List<CidrRange> ranges = new ArrayList<>();
		List<String> proxies = properties.getTrustedProxies();
		for (int i = 0; i < proxies.size(); i++) {
			try {
				ranges.add(CidrRange.parse(proxies.get(i)));
			}
			catch (IllegalArgumentException ex) {
				throw InvalidProperty.of(PREFIX + "trusted-proxies[" + i + "]", proxies.get(i), ex.getMessage()
						+ "; use an IP address such as 10.0.0.1 or a CIDR range such as 10.0.0.0/8 (host names are"
						+ " not resolved)", ex);
			}
		}
		checkPrefixLength("ipv4-prefix-length", properties.getIpv4PrefixLength(), 32);
		checkPrefixLength("ipv6-prefix-length", properties.getIpv6PrefixLength(), 128);
		return new ClientIpResolver(ranges, properties.getForwardedHeader(), properties.getIpv4PrefixLength(),
				properties.getIpv6PrefixLength());
	}

	private static void checkPrefixLength(String name, int value, int bits) {
		if (value < 1 || value > bits) {
			throw InvalidProperty.of(PREFIX + name, value, "must be between 1 and " + bits, null);
		}
	}

}

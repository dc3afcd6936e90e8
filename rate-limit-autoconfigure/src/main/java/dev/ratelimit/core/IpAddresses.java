package dev.ratelimit.core;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/**
 * Parses IP address literals without ever resolving a host name: a hostile
 * {@code X-Forwarded-For} value must not trigger a DNS lookup.
 */
final class IpAddresses {

	private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

	private static final Pattern IPV6 = Pattern.compile("\\[?[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(%[0-9A-Za-z]+)?]?");

	private IpAddresses() {
	}

	/**
	 * Parses an IPv4 or IPv6 literal.
	 * @param text the text
	 * @return the address, or {@code null} if the text is not an IP literal
	 */
	static InetAddress parse(String text) {
		if (text == null) {
			return null;
		}
		String candidate = text.strip();
		if (candidate.length() > 64 || !(IPV4.matcher(candidate).matches() || IPV6.matcher(candidate).matches())) {
			return null;
		}
		try {
			// Only literals reach this point, for which getByName performs no lookup.
			return InetAddress.getByName(candidate);
		}
		catch (UnknownHostException ex) {
			return null;
		}
	}

}

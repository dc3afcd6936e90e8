package dev.ratelimit.core;

import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * Parses and formats IP address literals, as 4 or 16 bytes, without ever
 * looking a name up: the text comes from request headers any caller writes.
 * <p>
 * Accepted, and nothing else: an IPv4 dotted quad of four decimal parts 0–255
 * without leading zeros (RFC 3986 {@code dec-octet}); an IPv6 address in any
 * RFC 4291 §2.2 form (eight groups of 1–4 hex digits in either case, one
 * {@code ::}, an IPv4 dotted quad in the last 32 bits), optionally in brackets
 * (RFC 3986 {@code IP-literal}) and with a zone id ({@code %eth0}, RFC 4007 and
 * RFC 6874), which is ignored. An IPv4-mapped IPv6 address
 * ({@code ::ffff:192.0.2.1}) is the IPv4 address. Host names, short or
 * hexadecimal IPv4 forms ({@code 1.2.3}, {@code 0x7f.1}) and octal-looking ones
 * ({@code 010.0.0.1}), which other parsers read differently, are not
 * addresses.
 * <p>
 * Written by hand, without regular expressions or {@code split}: the {@code ip}
 * key parses on every request.
 */
public final class IpAddresses {

	/**
	 * Longest text considered. The longest IPv6 literal is 45 characters; this
	 * leaves room for brackets, a zone id and a port, and bounds the work.
	 */
	public static final int MAX_LENGTH = 128;

	private static final char[] HEX = "0123456789abcdef".toCharArray();

	private IpAddresses() {
	}

	/**
	 * Parses an address literal, as written in configuration.
	 * @param text the text
	 * @return the address (4 or 16 bytes), or {@code null} if the text is not one
	 */
	public static byte @Nullable [] parse(@Nullable String text) {
		return (text != null) ? parse(text, 0, text.length(), false) : null;
	}

	/**
	 * Parses an address as proxies write a hop: a literal, optionally followed by
	 * a port after an IPv4 address or a bracketed IPv6 address
	 * ({@code 192.0.2.43:47011}, {@code [2001:db8::1]:4711}), or by an RFC 7239
	 * obfuscated port ({@code :_abc}). The port is ignored.
	 * @param text the text
	 * @param start the first character
	 * @param end the index after the last character
	 * @return the address (4 or 16 bytes), or {@code null} if the text is not one
	 */
	public static byte @Nullable [] parseNode(CharSequence text, int start, int end) {
		return parse(text, start, end, true);
	}

	private static byte @Nullable [] parse(CharSequence text, int start, int end, boolean portAllowed) {
		if (end - start <= 0 || end - start > MAX_LENGTH) {
			return null;
		}
		if (text.charAt(start) == '[') {
			int close = indexOf(text, ']', start + 1, end);
			if (close < 0 || (close + 1 < end && !(portAllowed && isPort(text, close + 1, end)))) {
				return null;
			}
			return parseIpv6(text, start + 1, close);
		}
		// An IPv6 address has a colon before any dot; an IPv4 address has a dot first.
		int i = start;
		while (i < end && text.charAt(i) != '.' && text.charAt(i) != ':') {
			i++;
		}
		if (i < end && text.charAt(i) == '.') {
			byte[] address = new byte[4];
			int after = parseIpv4(text, start, end, address, 0);
			return (after == end || (after > 0 && portAllowed && isPort(text, after, end))) ? address : null;
		}
		return parseIpv6(text, start, end);
	}

	/**
	 * Parses an RFC 3986 dotted quad into {@code out} from {@code offset}.
	 * @return the index after the quad, or -1 if there is none
	 */
	private static int parseIpv4(CharSequence text, int start, int end, byte[] out, int offset) {
		int i = start;
		for (int part = 0; part < 4; part++) {
			if (part > 0) {
				if (i == end || text.charAt(i) != '.') {
					return -1;
				}
				i++;
			}
			int partStart = i;
			int value = 0;
			while (i < end && i - partStart < 3 && isDigit(text.charAt(i))) {
				value = value * 10 + (text.charAt(i++) - '0');
			}
			int digits = i - partStart;
			if (digits == 0 || value > 255 || (digits > 1 && text.charAt(partStart) == '0')) {
				return -1;
			}
			out[offset + part] = (byte) value;
		}
		return i;
	}

	/** Parses an RFC 4291 IPv6 address with an optional zone id. */
	private static byte @Nullable [] parseIpv6(CharSequence text, int start, int end) {
		int percent = indexOf(text, '%', start, end);
		if (percent >= 0) {
			if (!isZoneId(text, percent + 1, end)) {
				return null;
			}
			end = percent;
		}
		if (end - start < 2) {
			return null;
		}
		byte[] out = new byte[16];
		int groups = 0;
		int gap = -1;
		int i = start;
		if (text.charAt(i) == ':') {
			if (text.charAt(i + 1) != ':') {
				return null;
			}
			gap = 0;
			i += 2;
		}
		while (i < end) {
			if (groups == 8) {
				return null;
			}
			int groupStart = i;
			int value = 0;
			while (i < end && i - groupStart < 4 && hexDigit(text.charAt(i)) >= 0) {
				value = (value << 4) | hexDigit(text.charAt(i++));
			}
			if (i < end && text.charAt(i) == '.') {
				// An IPv4 dotted quad ends the address and fills its last 32 bits.
				if (groups > 6 || parseIpv4(text, groupStart, end, out, groups * 2) != end) {
					return null;
				}
				groups += 2;
				break;
			}
			if (i == groupStart) {
				return null;
			}
			out[groups * 2] = (byte) (value >>> 8);
			out[groups * 2 + 1] = (byte) value;
			groups++;
			if (i == end) {
				break;
			}
			if (text.charAt(i) != ':' || ++i == end) {
				return null;
			}
			if (text.charAt(i) == ':') {
				if (gap >= 0) {
					return null;
				}
				gap = groups;
				i++;
			}
		}
		if (gap < 0) {
			return (groups == 8) ? unmapped(out) : null;
		}
		if (groups == 8) {
			// "::" stands for at least one group of zeros.
			return null;
		}
		int tail = (groups - gap) * 2;
		System.arraycopy(out, gap * 2, out, 16 - tail, tail);
		Arrays.fill(out, gap * 2, 16 - tail, (byte) 0);
		return unmapped(out);
	}

	/** Returns the IPv4 address of an IPv4-mapped IPv6 address, else the address. */
	private static byte[] unmapped(byte[] address) {
		for (int i = 0; i < 10; i++) {
			if (address[i] != 0) {
				return address;
			}
		}
		return (address[10] == (byte) 0xff && address[11] == (byte) 0xff) ? Arrays.copyOfRange(address, 12, 16)
				: address;
	}

	/** RFC 6874 {@code ZoneID}: unreserved characters or percent-encoded ones. */
	private static boolean isZoneId(CharSequence text, int start, int end) {
		if (start == end) {
			return false;
		}
		for (int i = start; i < end; i++) {
			char c = text.charAt(i);
			if (!(isAlphanumeric(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '%')) {
				return false;
			}
		}
		return true;
	}

	/** A colon, then RFC 7239 {@code port} (1–5 digits) or {@code obfport}. */
	private static boolean isPort(CharSequence text, int colon, int end) {
		if (colon + 1 >= end || text.charAt(colon) != ':') {
			return false;
		}
		boolean obfuscated = text.charAt(colon + 1) == '_';
		if (obfuscated ? end - colon - 1 < 2 : end - colon - 1 > 5) {
			return false;
		}
		for (int i = colon + 1; i < end; i++) {
			char c = text.charAt(i);
			boolean valid = obfuscated ? (isAlphanumeric(c) || c == '.' || c == '_' || c == '-') : isDigit(c);
			if (!valid) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Keeps the first {@code prefixLength} bits of an address and clears the
	 * rest, in place.
	 * @param address the address
	 * @param prefixLength the bits to keep
	 */
	public static void mask(byte[] address, int prefixLength) {
		for (int i = 0; i < address.length; i++) {
			int bits = Math.max(0, Math.min(8, prefixLength - i * 8));
			address[i] &= (byte) (0xFF << (8 - bits));
		}
	}

	/**
	 * Formats an address canonically: IPv4 as a dotted quad, IPv6 as RFC 5952
	 * recommends (lower case, no leading zeros, the longest run of two or more
	 * zero groups as {@code ::}, the leftmost of equal runs).
	 * @param address the address (4 or 16 bytes)
	 * @return the text
	 */
	public static String format(byte[] address) {
		if (address.length == 4) {
			StringBuilder text = new StringBuilder(15);
			for (int i = 0; i < 4; i++) {
				if (i > 0) {
					text.append('.');
				}
				text.append(address[i] & 0xFF);
			}
			return text.toString();
		}
		int gapStart = -1;
		int gapLength = 1;
		for (int g = 0; g < 8;) {
			int run = 0;
			while (g + run < 8 && group(address, g + run) == 0) {
				run++;
			}
			if (run > gapLength) {
				gapStart = g;
				gapLength = run;
			}
			g += Math.max(run, 1);
		}
		char[] text = new char[39];
		int n = 0;
		for (int g = 0; g < 8; g++) {
			if (g == gapStart) {
				text[n++] = ':';
				text[n++] = ':';
				g += gapLength - 1;
				continue;
			}
			if (n > 0 && text[n - 1] != ':') {
				text[n++] = ':';
			}
			n = appendHex(text, n, group(address, g));
		}
		return new String(text, 0, n);
	}

	private static int group(byte[] address, int index) {
		return ((address[index * 2] & 0xFF) << 8) | (address[index * 2 + 1] & 0xFF);
	}

	private static int appendHex(char[] text, int n, int value) {
		boolean started = false;
		for (int shift = 12; shift >= 0; shift -= 4) {
			int digit = (value >>> shift) & 0xF;
			if (started || digit != 0 || shift == 0) {
				text[n++] = HEX[digit];
				started = true;
			}
		}
		return n;
	}

	private static int indexOf(CharSequence text, char c, int start, int end) {
		for (int i = start; i < end; i++) {
			if (text.charAt(i) == c) {
				return i;
			}
		}
		return -1;
	}

	/** The value of an ASCII hex digit, or -1 ({@code Character.digit} takes other scripts' digits too). */
	private static int hexDigit(char c) {
		if (isDigit(c)) {
			return c - '0';
		}
		char lower = (char) (c | 0x20);
		return (lower >= 'a' && lower <= 'f') ? lower - 'a' + 10 : -1;
	}

	private static boolean isDigit(char c) {
		return c >= '0' && c <= '9';
	}

	private static boolean isAlphanumeric(char c) {
		return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
	}

}

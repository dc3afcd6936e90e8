package dev.ratelimit.core;

import java.net.InetAddress;
import java.util.Arrays;

/**
 * An IP address range in CIDR notation ({@code 10.0.0.0/8}, {@code ::1/128}) or
 * a single address. Addresses are literals only: a host name is rejected, never
 * looked up.
 */
public final class CidrRange {

	private final byte[] network;

	private final int prefixLength;

	private final String text;

	private CidrRange(byte[] network, int prefixLength, String text) {
		this.network = network;
		this.prefixLength = prefixLength;
		this.text = text;
	}

	/**
	 * Parses a range.
	 * @param text an address or {@code address/prefix-length}
	 * @return the range
	 * @throws IllegalArgumentException if the text is not a valid range
	 */
	public static CidrRange parse(String text) {
		String range = (text != null) ? text.strip() : "";
		int slash = range.indexOf('/');
		byte[] address = IpAddresses.parse((slash >= 0) ? range.substring(0, slash) : range);
		if (address == null) {
			throw new IllegalArgumentException("'" + text + "' is not an IP address or CIDR range");
		}
		int bits = address.length * 8;
		int prefix = (slash >= 0) ? prefixLength(range, slash + 1) : bits;
		if (prefix < 0 || prefix > bits) {
			throw new IllegalArgumentException("'" + text + "' has a prefix length outside 0.." + bits);
		}
		return new CidrRange(address, prefix, range);
	}

	/** Digits only: no sign, no spaces, at most three. */
	private static int prefixLength(String range, int start) {
		int length = range.length() - start;
		if (length < 1 || length > 3) {
			return -1;
		}
		int value = 0;
		for (int i = start; i < range.length(); i++) {
			char c = range.charAt(i);
			if (c < '0' || c > '9') {
				return -1;
			}
			value = value * 10 + (c - '0');
		}
		return value;
	}

	/**
	 * Returns whether the range contains an address.
	 * @param address the address
	 * @return whether it is inside this range
	 */
	public boolean contains(InetAddress address) {
		return contains(address.getAddress());
	}

	/**
	 * Returns whether the range contains an address. IPv4 ranges contain only
	 * IPv4 addresses, IPv6 ranges only IPv6 ones.
	 * @param address the address, 4 or 16 bytes
	 * @return whether it is inside this range
	 */
	public boolean contains(byte[] address) {
		if (address.length != this.network.length) {
			return false;
		}
		int fullBytes = this.prefixLength / 8;
		for (int i = 0; i < fullBytes; i++) {
			if (address[i] != this.network[i]) {
				return false;
			}
		}
		int remainingBits = this.prefixLength % 8;
		if (remainingBits == 0) {
			return true;
		}
		int mask = (0xFF << (8 - remainingBits)) & 0xFF;
		return (address[fullBytes] & mask) == (this.network[fullBytes] & mask);
	}

	/**
	 * Equal when the network address and the prefix length are, however the
	 * text was written ({@code 10.0.0.0/8} and {@code 10.0.0.0/08}).
	 */
	@Override
	public boolean equals(Object other) {
		return this == other || (other instanceof CidrRange that && this.prefixLength == that.prefixLength
				&& Arrays.equals(this.network, that.network));
	}

	@Override
	public int hashCode() {
		return 31 * Arrays.hashCode(this.network) + this.prefixLength;
	}

	@Override
	public String toString() {
		return this.text;
	}

}

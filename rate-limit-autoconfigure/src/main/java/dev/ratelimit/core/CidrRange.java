package dev.ratelimit.core;

import java.net.InetAddress;

/**
 * An IP address range in CIDR notation ({@code 10.0.0.0/8}, {@code ::1/128}) or
 * a single address.
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
		String[] parts = (text != null) ? text.strip().split("/", -1) : new String[0];
		InetAddress address = (parts.length == 1 || parts.length == 2) ? IpAddresses.parse(parts[0]) : null;
		if (address == null) {
			throw new IllegalArgumentException("'" + text + "' is not an IP address or CIDR range");
		}
		int bits = address.getAddress().length * 8;
		int prefix = bits;
		if (parts.length == 2) {
			try {
				prefix = Integer.parseInt(parts[1]);
			}
			catch (NumberFormatException ex) {
				prefix = -1;
			}
			if (prefix < 0 || prefix > bits) {
				throw new IllegalArgumentException("'" + text + "' has a prefix length outside 0.." + bits);
			}
		}
		return new CidrRange(address.getAddress(), prefix, text.strip());
	}

	/**
	 * Returns whether the range contains an address.
	 * @param address the address
	 * @return whether it is inside this range
	 */
	public boolean contains(InetAddress address) {
		byte[] candidate = address.getAddress();
		if (candidate.length != this.network.length) {
			return false;
		}
		int fullBytes = this.prefixLength / 8;
		for (int i = 0; i < fullBytes; i++) {
			if (candidate[i] != this.network[i]) {
				return false;
			}
		}
		int remainingBits = this.prefixLength % 8;
		if (remainingBits == 0) {
			return true;
		}
		int mask = (0xFF << (8 - remainingBits)) & 0xFF;
		return (candidate[fullBytes] & mask) == (this.network[fullBytes] & mask);
	}

	@Override
	public String toString() {
		return this.text;
	}

}

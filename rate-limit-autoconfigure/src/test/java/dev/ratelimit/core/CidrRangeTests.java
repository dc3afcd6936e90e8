package dev.ratelimit.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Address ranges in CIDR notation, as trusted proxies and exemptions are
 * configured.
 */
class CidrRangeTests {

	@Test
	void cidrRangesMatchByPrefix() {
		CidrRange range = CidrRange.parse("192.168.4.0/22");
		assertThat(range.contains(IpAddresses.parse("192.168.7.255"))).isTrue();
		assertThat(range.contains(IpAddresses.parse("192.168.8.0"))).isFalse();
		assertThat(range.contains(IpAddresses.parse("::1"))).isFalse();
		assertThat(range.contains(IpAddresses.parse("::ffff:192.168.5.1"))).isTrue();
		assertThat(CidrRange.parse("2001:db8::/32").contains(IpAddresses.parse("2001:db8:1::5"))).isTrue();
		assertThat(CidrRange.parse(" [2001:DB8::]/32 ").contains(IpAddresses.parse("2001:db8:1::5"))).isTrue();
		assertThat(CidrRange.parse("0.0.0.0/0").contains(IpAddresses.parse("203.0.113.1"))).isTrue();
	}

}

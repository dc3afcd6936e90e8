package dev.ratelimit.core;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ClientIpResolverTests {

	private final ClientIpResolver behindProxy = new ClientIpResolver(
			List.of(CidrRange.parse("10.0.0.0/8"), CidrRange.parse("::1")));

	@Test
	void forwardedForFromAnUntrustedPeerIsIgnored() {
		assertThat(this.behindProxy.resolve("203.0.113.9", List.of("1.2.3.4"))).isEqualTo("203.0.113.9");
	}

	@Test
	void withoutTrustedProxiesThePeerIsTheClient() {
		ClientIpResolver direct = new ClientIpResolver(List.of());
		assertThat(direct.resolve("10.1.1.1", List.of("1.2.3.4"))).isEqualTo("10.1.1.1");
	}

	@Test
	void forwardedForFromATrustedProxyNamesTheClient() {
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("198.51.100.7"))).isEqualTo("198.51.100.7");
	}

	@Test
	void chainIsReadFromTheRightSoAPrependedSpoofIsIgnored() {
		// the client sent "X-Forwarded-For: 6.6.6.6"; our proxies appended the real hops
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("6.6.6.6, 198.51.100.7, 10.2.2.2")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void severalHeaderLinesFormOneChain() {
		assertThat(this.behindProxy.resolve("::1", List.of("6.6.6.6", "198.51.100.7, 10.2.2.2")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void garbageInTheChainStopsAtTheLastTrustedHop() {
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("evil.example.com, 10.3.3.3"))).isEqualTo("10.3.3.3");
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("x".repeat(10_000)))).isEqualTo("10.1.1.1");
	}

	@Test
	void cidrRangesMatchByPrefix() {
		CidrRange range = CidrRange.parse("192.168.4.0/22");
		assertThat(range.contains(IpAddresses.parse("192.168.7.255"))).isTrue();
		assertThat(range.contains(IpAddresses.parse("192.168.8.0"))).isFalse();
		assertThat(range.contains(IpAddresses.parse("::1"))).isFalse();
		assertThat(CidrRange.parse("2001:db8::/32").contains(IpAddresses.parse("2001:db8:1::5"))).isTrue();
	}

	@Test
	void invalidRangesAreRejectedWithTheValue() {
		assertThatIllegalArgumentException().isThrownBy(() -> CidrRange.parse("10.0.0.0/33")).withMessageContaining("10.0.0.0/33");
		assertThatIllegalArgumentException().isThrownBy(() -> CidrRange.parse("localhost")).withMessageContaining("localhost");
	}

}

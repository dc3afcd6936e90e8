package dev.ratelimit.web;

import java.net.InetAddress;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.mockito.MockedStatic;

import dev.ratelimit.core.CidrRange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.mockito.Mockito.mockStatic;

/**
 * Who the client is, from the peer address and the configured forwarded header,
 * and the {@code ip} key it gets.
 */
class ClientIpResolverTests {

	private static final List<CidrRange> PROXIES = List.of(CidrRange.parse("10.0.0.0/8"), CidrRange.parse("::1"),
			CidrRange.parse("2001:db8:ffff::/48"));

	private final ClientIpResolver behindProxy = new ClientIpResolver(PROXIES);

	private final ClientIpResolver behindRfc7239Proxy = new ClientIpResolver(PROXIES, ForwardedHeader.FORWARDED, 32,
			128);

	@Test
	void forwardedForFromAnUntrustedPeerIsIgnored() {
		assertThat(this.behindProxy.resolve("203.0.113.9", List.of("1.2.3.4"))).isEqualTo("203.0.113.9");
	}

	@Test
	void withoutTrustedProxiesThePeerIsTheClient() {
		ClientIpResolver direct = new ClientIpResolver(List.of());
		assertThat(direct.readsHeader()).isFalse();
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
		assertThat(this.behindProxy.resolve("0:0:0:0:0:0:0:1", List.of("6.6.6.6", "198.51.100.7", "10.2.2.2")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void hopsMayCarryPortsBracketsAndAnyCase() {
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("[2001:DB8::7]:4711, 10.2.2.2:8080")))
			.isEqualTo("2001:db8::");
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("\t198.51.100.7:443 ,10.2.2.2")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void garbageInTheChainStopsAtTheLastTrustedHop() {
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("evil.example.com, 10.3.3.3"))).isEqualTo("10.3.3.3");
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("198.51.100.7, 1.2.3.999, 10.3.3.3")))
			.isEqualTo("10.3.3.3");
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("198.51.100.7, , 10.3.3.3"))).isEqualTo("10.3.3.3");
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("198.51.100.7", ""))).isEqualTo("10.1.1.1");
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("198.51.100.7, unknown"))).isEqualTo("10.1.1.1");
	}

	@Test
	void hostileHeadersCostLittleAndNeverLookAnythingUp() {
		String tenKilobytes = "x".repeat(10_000);
		String manyCommas = "198.51.100.7" + ",".repeat(10_000);
		String manyProxies = "198.51.100.7, " + "10.0.0.1, ".repeat(1_000) + "10.0.0.2";
		try (MockedStatic<InetAddress> inet = mockStatic(InetAddress.class)) {
			assertThat(this.behindProxy.resolve("10.1.1.1", List.of(tenKilobytes))).isEqualTo("10.1.1.1");
			assertThat(this.behindProxy.resolve("10.1.1.1", List.of("1.2.3.4\r\n"))).isEqualTo("10.1.1.1");
			assertThat(this.behindProxy.resolve("10.1.1.1", List.of("1.2.3.4\u0000"))).isEqualTo("10.1.1.1");
			assertThat(this.behindProxy.resolve("10.1.1.1", List.of(manyCommas))).isEqualTo("10.1.1.1");
			assertThat(this.behindProxy.resolve("10.1.1.1", Collections.nCopies(1_000, "10.0.0.3")))
				.isEqualTo("10.0.0.3");
			assertThat(this.behindProxy.resolve("10.1.1.1", List.of(manyProxies))).isEqualTo("198.51.100.7");
			assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of(tenKilobytes))).isEqualTo("10.1.1.1");
			assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of("for=\"" + tenKilobytes)))
				.isEqualTo("10.1.1.1");
			assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of(manyCommas))).isEqualTo("10.1.1.1");
			inet.verifyNoInteractions();
		}
	}

	@Test
	void aPeerThatIsNotAnAddressHasNoKey() {
		assertThat(this.behindProxy.resolve("proxy.local", List.of("198.51.100.7"))).isNull();
		assertThat(this.behindProxy.resolve("1.2.3.999", List.of())).isNull();
		assertThat(this.behindProxy.resolve(null, List.of())).isNull();
	}

	@Test
	void everySpellingOfAnAddressIsOneKey() {
		ClientIpResolver exact = new ClientIpResolver(List.of(), ForwardedHeader.X_FORWARDED_FOR, 32, 128);
		for (String form : List.of("2001:db8::7", "2001:DB8:0:0:0:0:0:7", "[2001:db8::7]", "2001:0db8::0007")) {
			assertThat(exact.resolve(form, List.of())).isEqualTo("2001:db8::7");
		}
		assertThat(exact.resolve("fe80::1%eth0", List.of())).isEqualTo("fe80::1");
		assertThat(exact.resolve("::ffff:192.0.2.1", List.of())).isEqualTo("192.0.2.1");
		assertThat(exact.resolve("192.0.2.1", List.of())).isEqualTo("192.0.2.1");
	}

	@Test
	void ipv6ClientsAreKeyedByTheirNetworkAndTrustUsesTheFullAddress() {
		assertThat(this.behindProxy.resolve("2001:db8:0:7:a:b:c:d", List.of())).isEqualTo("2001:db8:0:7::");
		assertThat(this.behindProxy.resolve("2001:db8:0:7::1", List.of())).isEqualTo("2001:db8:0:7::");
		assertThat(this.behindProxy.resolve("2001:db8:0:8::1", List.of())).isEqualTo("2001:db8:0:8::");
		// 2001:db8:ffff::/48 is trusted; 2001:db8:fffe::1 shares no /48 with it and is the client
		assertThat(this.behindProxy.resolve("2001:db8:ffff::1", List.of("2001:db8:fffe::1, 2001:db8:ffff::2")))
			.isEqualTo("2001:db8:fffe::");
	}

	@Test
	void ipv4ClientsAreKeyedByAddressUnlessAShorterPrefixIsConfigured() {
		ClientIpResolver slash24 = new ClientIpResolver(PROXIES, ForwardedHeader.X_FORWARDED_FOR, 24, 64);
		assertThat(slash24.resolve("192.0.2.77", List.of())).isEqualTo("192.0.2.0");
		// trust is decided on the full address: 10.9.9.9 is trusted, not "10.9.9.0"
		assertThat(slash24.resolve("10.9.9.9", List.of("198.51.100.7"))).isEqualTo("198.51.100.0");
	}

	@Test
	void forwardedFromATrustedProxyNamesTheClient() {
		assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of("for=198.51.100.7;proto=https")))
			.isEqualTo("198.51.100.7");
		assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of("for=\"[2001:db8:cafe::17]:4711\"")))
			.isEqualTo("2001:db8:cafe::17");
		assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of("For=\"198.51.100.7:_port\"")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void forwardedFromAnUntrustedPeerIsIgnored() {
		assertThat(this.behindRfc7239Proxy.resolve("203.0.113.9", List.of("for=198.51.100.7")))
			.isEqualTo("203.0.113.9");
	}

	@Test
	void forwardedIsReadFromTheRightAcrossLines() {
		assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1",
				List.of("for=6.6.6.6, for=198.51.100.7;by=10.2.2.2", "for=10.2.2.2;proto=https")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void anUnknownOrObfuscatedForwardedHopEndsTheWalk() {
		assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of("for=198.51.100.7, for=unknown")))
			.isEqualTo("10.1.1.1");
		assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1",
				List.of("for=198.51.100.7, for=\"_hidden\", for=10.2.2.2")))
			.isEqualTo("10.2.2.2");
		assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of("for=198.51.100.7, by=10.2.2.2")))
			.isEqualTo("10.1.1.1");
	}

	@Test
	void aClientCannotHideTheProxysElementInAQuote() {
		// the client sent 'Forwarded: for="' and the proxy appended ', for=203.0.113.5' to the same line
		assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of("for=\", for=203.0.113.5")))
			.isEqualTo("10.1.1.1");
		// a line of its own stays readable: the client's broken line is left of the proxy's
		assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of("for=\"6.6.6.6", "for=203.0.113.5")))
			.isEqualTo("203.0.113.5");
	}

	@Test
	void onlyTheConfiguredHeaderIsRead() {
		// the caller passes the configured header's lines; an X-Forwarded-For value is no Forwarded element
		assertThat(this.behindRfc7239Proxy.header()).isEqualTo(ForwardedHeader.FORWARDED);
		assertThat(this.behindRfc7239Proxy.resolve("10.1.1.1", List.of("198.51.100.7"))).isEqualTo("10.1.1.1");
		assertThat(this.behindProxy.header()).isEqualTo(ForwardedHeader.X_FORWARDED_FOR);
		assertThat(this.behindProxy.resolve("10.1.1.1", List.of("for=198.51.100.7"))).isEqualTo("10.1.1.1");
	}

	@Test
	void prefixLengthsAreChecked() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ClientIpResolver(PROXIES, ForwardedHeader.FORWARDED, 33, 64))
			.withMessageContaining("33");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ClientIpResolver(PROXIES, ForwardedHeader.FORWARDED, 32, 0))
			.withMessageContaining("0");
	}

	@Test
	void invalidRangesAreRejectedWithTheValue() {
		for (String invalid : new String[] { "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/+8", "10.0.0.0/ 8",
				"10.0.0.0/8/8", "10.0.0.0/0008" }) {
			assertThatIllegalArgumentException().isThrownBy(() -> CidrRange.parse(invalid))
				.withMessageContaining(invalid);
		}
		try (MockedStatic<InetAddress> inet = mockStatic(InetAddress.class)) {
			for (String invalid : new String[] { "localhost", "proxy.local", "1.2.3.999", "10.0.0.1:80", "" }) {
				assertThatIllegalArgumentException().isThrownBy(() -> CidrRange.parse(invalid))
					.withMessageContaining("'" + invalid + "'");
			}
			inet.verifyNoInteractions();
		}
	}

}

package dev.ratelimit.core;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.mockito.MockedStatic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mockStatic;

/**
 * The address parser: every RFC 4291 / RFC 3986 form it must accept, the RFC 5952
 * text it writes, masking, and hostile or malformed text, which is not an
 * address and is never handed to a resolver.
 */
class IpAddressesTests {

	@ParameterizedTest
	@ValueSource(strings = { "1.2.3.999", "999.999.999.999", "256.0.0.1", "1.2.3", "1.2", "1", "1.2.3.4.5", "1..2.3",
			".1.2.3", "1.2.3.", "0x7f.1", "0x7f.0.0.1", "127.1", "2130706433", "010.0.0.1", "1.2.3.04", "00.0.0.0",
			"+1.2.3.4", "1.2.3.-4", "\uFF11.2.3.4", "1.2.3.4\u0000", "1.2.3.4\n", "\r\n1.2.3.4", " 1.2.3.4", "1.2.3.4 ",
			"evil.example.com", "localhost", "example", "unknown", "_hidden", "2001:db8::g", "2001:db8::\u0661",
			"1::2::3", ":::", ":1::", "::1:", "1:", ":", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7::8",
			"::1:2:3:4:5:6:7:8", "12345::", "::12345", "[1.2.3.4]", "[2001:db8::1", "2001:db8::1]", "[[::1]]", "[]",
			"::ffff:1.2.3.999", "::1.2.3", "1.2.3.4::", "::1.2.3.4:5", "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3.4.5",
			"fe80::1%", "fe80::1%eth 0", "fe80::1%eth0/64", "1.2.3.4%eth0", "[fe80::1%]", "", "[", "%", "1.2.3.4:",
			"1.2.3.4:123456", "1.2.3.4:_", "1.2.3.4:8o", "[::1]:", "[::1]x", "[::1]:65536x", "::1:80:" })
	void malformedAddressIsNotAnAddressAndIsNeverLookedUp(String text) {
		try (MockedStatic<InetAddress> inet = mockStatic(InetAddress.class)) {
			assertThat(IpAddresses.parse(text)).isNull();
			assertThat(IpAddresses.parseNode(text, 0, text.length())).isNull();
			inet.verifyNoInteractions();
		}
	}

	@Test
	void overlongTextIsNotAnAddress() {
		assertThat(IpAddresses.parse("1".repeat(10_000))).isNull();
		assertThat(IpAddresses.parse("1.2.3.4" + " ".repeat(10_000))).isNull();
		assertThat(IpAddresses.parse("fe80::1%" + "a".repeat(200))).isNull();
		assertThat(IpAddresses.parse("0000:0000:0000:0000:0000:ffff:255.255.255.255")).isNotNull();
	}

	@ParameterizedTest
	@CsvSource({
			// RFC 4291 §2.2, form 1: eight groups, any case, leading zeros optional
			"ABCD:EF01:2345:6789:ABCD:EF01:2345:6789, abcd:ef01:2345:6789:abcd:ef01:2345:6789",
			"2001:DB8:0:0:8:800:200C:417A, 2001:db8::8:800:200c:417a",
			"2001:0db8:0000:0000:0000:0000:0000:0001, 2001:db8::1",
			"FF01:0:0:0:0:0:0:101, ff01::101", "0:0:0:0:0:0:0:1, ::1", "0:0:0:0:0:0:0:0, ::",
			// form 2: "::" for one or more groups of zeros
			"2001:DB8::8:800:200C:417A, 2001:db8::8:800:200c:417a", "FF01::101, ff01::101", "::1, ::1", "::, ::",
			"1::, 1::", "1:2:3:4:5:6:7::, 1:2:3:4:5:6:7:0", "::2:3:4:5:6:7:8, 0:2:3:4:5:6:7:8",
			// form 3: an IPv4 dotted quad in the last 32 bits
			"0:0:0:0:0:0:13.1.68.3, ::d01:4403", "::13.1.68.3, ::d01:4403", "1:2:3:4:5:6:1.2.3.4, 1:2:3:4:5:6:102:304",
			"::1:2:3:4:5:1.2.3.4, 0:1:2:3:4:5:102:304",
			// IPv4-mapped IPv6 is the IPv4 address, however written
			"0:0:0:0:0:FFFF:129.144.52.38, 129.144.52.38", "::FFFF:129.144.52.38, 129.144.52.38",
			"::ffff:8190:3426, 129.144.52.38", "[::ffff:192.0.2.1], 192.0.2.1",
			// RFC 5952 §4: the longest run of zero groups, the leftmost of equal ones, never a single one
			"2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1", "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
			"2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1", "2001:db8:0:0:1:0:0:0, 2001:db8:0:0:1::",
			// RFC 3986 IP-literal, RFC 6874 / RFC 4007 zone ids (ignored)
			"[2001:db8::7], 2001:db8::7", "fe80::1%eth0, fe80::1", "[fe80::1%25eth0], fe80::1", "fe80::1%2, fe80::1",
			// RFC 3986 dec-octet
			"0.0.0.0, 0.0.0.0", "255.255.255.255, 255.255.255.255", "192.0.2.1, 192.0.2.1", "10.0.0.10, 10.0.0.10" })
	void literalsParseToTheirCanonicalForm(String text, String canonical) {
		assertThat(IpAddresses.format(IpAddresses.parse(text))).isEqualTo(canonical);
		assertThat(IpAddresses.format(IpAddresses.parseNode(text, 0, text.length()))).isEqualTo(canonical);
	}

	@ParameterizedTest
	@CsvSource({ "192.0.2.43:47011, 192.0.2.43", "[2001:db8::1]:4711, 2001:db8::1", "[2001:db8::1]:_abc, 2001:db8::1",
			"192.0.2.43:_hidden-1.x, 192.0.2.43", "1.2.3.4:0, 1.2.3.4", "[fe80::1%25eth0]:80, fe80::1" })
	void nodesAsProxiesWriteThemMayCarryAPort(String text, String canonical) {
		assertThat(IpAddresses.format(IpAddresses.parseNode(text, 0, text.length()))).isEqualTo(canonical);
		// configuration takes an address, not a node
		assertThat(IpAddresses.parse(text)).isNull();
	}

	@Test
	void aNodeIsParsedInPlaceWithinALongerText() {
		String line = "6.6.6.6, [2001:db8::1]:4711, 10.0.0.1";
		assertThat(IpAddresses.format(IpAddresses.parseNode(line, 9, 27))).isEqualTo("2001:db8::1");
	}

	@ParameterizedTest
	@CsvSource({ "2001:db8:0:7:a:b:c:d, 64, 2001:db8:0:7::", "2001:db8:1:2ff::1, 56, 2001:db8:1:200::",
			"2001:db8:0:7:a:b:c:d, 128, 2001:db8:0:7:a:b:c:d", "ffff::, 1, 8000::", "2001:db8::1, 127, 2001:db8::",
			"192.0.2.77, 24, 192.0.2.0", "192.0.2.77, 32, 192.0.2.77", "192.0.2.77, 31, 192.0.2.76",
			"255.255.255.255, 1, 128.0.0.0", "::ffff:192.0.2.77, 16, 192.0.0.0" })
	void maskingKeepsThePrefix(String text, int prefixLength, String network) {
		byte[] address = IpAddresses.parse(text);
		IpAddresses.mask(address, prefixLength);
		assertThat(IpAddresses.format(address)).isEqualTo(network);
	}

	@Test
	void everyAddressRoundTripsThroughItsCanonicalAndItsJdkForm() throws UnknownHostException {
		Random random = new Random(12);
		for (int n = 0; n < 20_000; n++) {
			byte[] address = new byte[16];
			for (int g = 0; g < 8; g++) {
				// Zero groups half the time, so that runs of every length and place occur.
				if (random.nextBoolean()) {
					address[g * 2] = (byte) random.nextInt(256);
					address[g * 2 + 1] = (byte) random.nextInt(256);
				}
			}
			byte[] expected = isMapped(address) ? Arrays.copyOfRange(address, 12, 16) : address;
			String canonical = IpAddresses.format(address.clone());
			assertThat(IpAddresses.parse(canonical)).as(canonical).isEqualTo(expected);
			assertThat(IpAddresses.parse(canonical.toUpperCase())).as(canonical).isEqualTo(expected);
			// getByAddress takes bytes and getHostAddress writes them out: neither looks anything up.
			String jdk = InetAddress.getByAddress(address).getHostAddress();
			assertThat(IpAddresses.parse(jdk)).as(jdk).isEqualTo(expected);
		}
	}

	private static boolean isMapped(byte[] address) {
		for (int i = 0; i < 10; i++) {
			if (address[i] != 0) {
				return false;
			}
		}
		return address[10] == (byte) 0xff && address[11] == (byte) 0xff;
	}

}

package dev.ratelimit.web;

import java.util.Collections;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The RFC 7239 {@code Forwarded} grammar as far as the client address needs it,
 * and lines that break it.
 */
class ForwardedElementsTests {

	@Test
	void rfc7239ExamplesYieldTheirForValues() {
		// RFC 7239 §4 and §7.1
		assertThat(ForwardedElements.forValues("for=\"_gazonk\"")).containsExactly("_gazonk");
		assertThat(ForwardedElements.forValues("For=\"[2001:db8:cafe::17]:4711\""))
			.containsExactly("[2001:db8:cafe::17]:4711");
		assertThat(ForwardedElements.forValues("for=192.0.2.60;proto=http;by=203.0.113.43"))
			.containsExactly("192.0.2.60");
		assertThat(ForwardedElements.forValues("for=192.0.2.43, for=198.51.100.17"))
			.containsExactly("192.0.2.43", "198.51.100.17");
		assertThat(ForwardedElements.forValues("for=192.0.2.43,for=\"[2001:db8:cafe::17]\",for=unknown"))
			.containsExactly("192.0.2.43", "[2001:db8:cafe::17]", "unknown");
	}

	@Test
	void namesAreCaseInsensitiveAndOtherParametersAreSkipped() {
		assertThat(ForwardedElements.forValues("by=10.0.0.1;FOR=192.0.2.1;host=\"a;b,c\";proto=https"))
			.containsExactly("192.0.2.1");
		assertThat(ForwardedElements.forValues("foreign=1;fo=2;for=192.0.2.1")).containsExactly("192.0.2.1");
	}

	@Test
	void quotedStringsHoldSeparatorsAndEscapes() {
		assertThat(ForwardedElements.forValues("for=\"192.0.2.1, for=6.6.6.6\""))
			.containsExactly("192.0.2.1, for=6.6.6.6");
		assertThat(ForwardedElements.forValues("for=\"\\[::1\\]\"")).containsExactly("[::1]");
	}

	@Test
	void whitespaceAroundSeparatorsIsAllowed() {
		assertThat(ForwardedElements.forValues(" for=192.0.2.1 ;\tproto=http , for=192.0.2.2 "))
			.containsExactly("192.0.2.1", "192.0.2.2");
	}

	@Test
	void unquotedNodesWithColonsAndBracketsAreTolerated() {
		assertThat(ForwardedElements.forValues("for=[2001:db8::1]:4711, for=192.0.2.1:80"))
			.containsExactly("[2001:db8::1]:4711", "192.0.2.1:80");
	}

	@Test
	void anElementWithoutOneForIsNotAnAddress() {
		assertThat(ForwardedElements.forValues("proto=https, for=192.0.2.1;for=6.6.6.6, , for=192.0.2.2;;"))
			.containsExactly(ForwardedElements.NONE, ForwardedElements.NONE, ForwardedElements.NONE, "192.0.2.2");
		assertThat(ForwardedElements.forValues("")).containsExactly(ForwardedElements.NONE);
	}

	@ParameterizedTest
	@ValueSource(strings = { "for", "for=", "for=\"192.0.2.1", "for=\"192.0.2.1\"x", "for=192.0.2.1 x",
			"=192.0.2.1", "for = 192.0.2.1", "for=\"a\u0000b\"", "for=a\u0000b", "for=\"a\\", "for=1.2.3.4\n",
			"for=\"x, for=203.0.113.5", "for=\"x\\\", for=203.0.113.5", "for=1;2", "for=\u00e9", "for=\"\u0100\"" })
	void aLineThatBreaksTheGrammarIsNotRead(String line) {
		assertThat(ForwardedElements.forValues(line)).isNull();
	}

	@Test
	void hostileLinesAreReadInLinearTime() {
		assertThat(ForwardedElements.forValues(",".repeat(10_000))).hasSize(10_001)
			.containsOnly(ForwardedElements.NONE);
		assertThat(ForwardedElements.forValues(";".repeat(10_000) + "for=192.0.2.1")).containsExactly("192.0.2.1");
		assertThat(ForwardedElements.forValues("for=\"" + "\\\"".repeat(5_000) + "\"")).containsExactly(
				String.join("", Collections.nCopies(5_000, "\"")));
		assertThat(ForwardedElements.forValues("for=\"" + "x".repeat(10_000))).isNull();
	}

}

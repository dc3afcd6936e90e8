package dev.ratelimit.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class LimitKeysTests {

	private final LimitKeys keys = new LimitKeys("rl", 128);

	@Test
	void keyIsNamespacedByPrefixAndPolicyAndCarriesAHashTag() {
		assertThat(this.keys.build("agent-runs", "user-42")).isEqualTo("rl:agent-runs:{user-42}");
	}

	@Test
	void bracesAndControlCharactersCannotBreakTheHashTag() {
		String key = this.keys.build("p", "a}b{c\r\nd e\u0000");
		assertThat(key).isEqualTo("rl:p:{a%7Db%7Bc%0D%0Ad%20e%00}");
		assertThat(key.substring(key.indexOf('{') + 1, key.length() - 1)).doesNotContain("{", "}");
	}

	@Test
	void encodingIsInjectiveSoDifferentCallersNeverShareABucket() {
		assertThat(this.keys.build("p", "a{")).isNotEqualTo(this.keys.build("p", "a%7B"));
		assertThat(this.keys.build("p", "%none")).isNotEqualTo(this.keys.sharedKey("p"));
		assertThat(this.keys.build("p", "é")).isNotEqualTo(this.keys.build("p", "%C3%A9"));
	}

	@Test
	void emptyValueAndLoneSurrogatesGetFormsOfTheirOwn() {
		assertThat(this.keys.build("p", "")).isEqualTo("rl:p:{%e}");
		assertThat(this.keys.build("p", "a\uD800")).isEqualTo("rl:p:{a%uD800}");
		assertThat(this.keys.build("p", "a\uD800")).isNotEqualTo(this.keys.build("p", "a\uDBFF"))
			.isNotEqualTo(this.keys.build("p", "a?"));
		assertThat(this.keys.build("p", "x\uD83D\uDE00")).isEqualTo("rl:p:{x%F0%9F%98%80}");
		assertThat(this.keys.build("p", "{\uD83D\uDE00")).isEqualTo("rl:p:{%7B%F0%9F%98%80}");
		String longA = "x".repeat(200) + "\uD800";
		String longB = "x".repeat(200) + "\uDBFF";
		assertThat(this.keys.build("p", longA)).isNotEqualTo(this.keys.build("p", longB));
	}

	@Test
	void longValuesAreHashedToABoundedLength() {
		String huge = "x".repeat(10_000);
		String key = this.keys.build("p", huge);
		assertThat(key).startsWith("rl:p:{%h").hasSizeLessThan(64);
		assertThat(this.keys.build("p", huge + "y")).isNotEqualTo(key);
		assertThat(this.keys.build("p", huge)).isEqualTo(key);
	}

	@Test
	void valueAtTheLimitIsKeptReadable() {
		String value = "v".repeat(128);
		assertThat(this.keys.build("p", value)).isEqualTo("rl:p:{" + value + "}");
	}

	@Test
	void prefixMustBeSafe() {
		assertThatIllegalArgumentException().isThrownBy(() -> new LimitKeys("r{l", 128)).withMessageContaining("r{l");
		assertThatIllegalArgumentException().isThrownBy(() -> new LimitKeys("rl", 3)).withMessageContaining("16");
	}

	@Test
	void theCallersValueComesBackFromItsStorageKeyForAnOperatorToRead() {
		for (String value : new String[] { "alice", "", "a b{c}%d", "t\u00e9l\u00e9phone x", "\uD83D\uDE00 smile",
				"lone\uD800surrogate", "line\nbreak" }) {
			assertThat(LimitKeys.callerValue(this.keys.build("api:x", value))).isEqualTo(value);
		}
		assertThat(LimitKeys.callerValue(this.keys.sharedKey("api"))).isEqualTo("%none");
		assertThat(LimitKeys.callerValue(this.keys.build("api", "x".repeat(200)))).startsWith("%h");
		assertThat(LimitKeys.callerValue("not-a-storage-key")).isEqualTo("not-a-storage-key");
	}

}

package dev.ratelimit.client;

import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reading what a provider's answer says about when to call next.
 */
class ProviderSignalsTests {

	private static final long NOW = 1_700_000_000_000_000L;

	@Test
	void retryAfterReadsSecondsAndHttpDatesAndIgnoresTheRest() {
		assertThat(ProviderSignals.retryAfterMicros("120", NOW)).isEqualTo(120_000_000L);
		assertThat(ProviderSignals.retryAfterMicros(" 0 ", NOW)).isZero();
		// 1_700_000_000 s is Tue, 14 Nov 2023 22:13:20 GMT.
		assertThat(ProviderSignals.retryAfterMicros("Tue, 14 Nov 2023 22:13:50 GMT", NOW)).isEqualTo(30_000_000L);
		assertThat(ProviderSignals.retryAfterMicros("Tue, 14 Nov 2023 22:00:00 GMT", NOW)).isZero();
		assertThat(ProviderSignals.retryAfterMicros("soon", NOW)).isEqualTo(ProviderSignals.NONE);
		assertThat(ProviderSignals.retryAfterMicros("-5", NOW)).isEqualTo(ProviderSignals.NONE);
		assertThat(ProviderSignals.retryAfterMicros(null, NOW)).isEqualTo(ProviderSignals.NONE);
	}

	@Test
	void vendorResetsReadAsGoDurationsOrSeconds() {
		assertThat(ProviderSignals.resetMicros("1s")).isEqualTo(1_000_000L);
		assertThat(ProviderSignals.resetMicros("6m0s")).isEqualTo(360_000_000L);
		assertThat(ProviderSignals.resetMicros("20ms")).isEqualTo(20_000L);
		assertThat(ProviderSignals.resetMicros("1h2m3.5s")).isEqualTo(3_723_500_000L);
		assertThat(ProviderSignals.resetMicros("0.5")).isEqualTo(500_000L);
		assertThat(ProviderSignals.resetMicros("6 minutes")).isEqualTo(ProviderSignals.NONE);
		assertThat(ProviderSignals.resetMicros("1s2x")).isEqualTo(ProviderSignals.NONE);
	}

	@Test
	void anExhaustedQuotaAsksForAPauseUntilItsLatestReset() {
		assertThat(pause("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "6m0s",
				"x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "20ms")).isEqualTo(360_000_000L);
		assertThat(pause("x-ratelimit-remaining-requests", "3", "x-ratelimit-reset-requests", "6m0s"))
			.isEqualTo(ProviderSignals.NONE);
		assertThat(pause("RateLimit", "\"agent-runs\";r=0;t=2")).isEqualTo(2_000_000L);
		assertThat(pause("RateLimit", "\"a, b\";r=1;t=9, \"c\";r=0;t=4")).isEqualTo(4_000_000L);
		assertThat(pause("RateLimit", "\"a\";r=2;t=9")).isEqualTo(ProviderSignals.NONE);
		assertThat(pause("RateLimit-Remaining", "0", "RateLimit-Reset", "7")).isEqualTo(7_000_000L);
		assertThat(pause("RateLimit", "garbage;;;")).isEqualTo(ProviderSignals.NONE);
	}

	private static long pause(String... fields) {
		Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
		for (int i = 0; i < fields.length; i += 2) {
			headers.put(fields[i], fields[i + 1]);
		}
		return ProviderSignals.exhaustedQuotaMicros(headers::get);
	}

}

package dev.ratelimit.actuate;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.LimitKind;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What health learns from the limiter's own calls: a store fails from the call
 * that found it failing until one finds it answering, and a failure with no
 * call after it stops counting, so that a quiet instance is not held down.
 */
class StoreAvailabilityTests {

	private final ManualTimeSource time = new ManualTimeSource();

	private final StoreAvailability stores = new StoreAvailability(this.time);

	@Test
	void everyStoreAnswersUntilACallFails() {
		this.stores.storeCalled(LimitKind.RATE_LIMIT, 1000, true);

		assertThat(this.stores.failing()).isEmpty();
	}

	@Test
	void failedCallMarksItsKindWithTheCauseUntilACallAnswers() {
		this.stores.storeCalled(LimitKind.BUDGET, 1000, false);
		this.stores.storeAvailabilityChanged(LimitKind.BUDGET, false,
				new IllegalStateException("NOPERM this user has no permissions to run the 'evalsha' command"));

		assertThat(this.stores.failing()).containsOnlyKeys(LimitKind.BUDGET);
		assertThat(this.stores.failing().get(LimitKind.BUDGET)).contains("NOPERM");

		this.stores.storeCalled(LimitKind.RATE_LIMIT, 1000, true);
		assertThat(this.stores.failing()).as("another kind's answer says nothing of this one")
			.containsOnlyKeys(LimitKind.BUDGET);

		this.stores.storeCalled(LimitKind.BUDGET, 1000, true);
		assertThat(this.stores.failing()).isEmpty();
	}

	@Test
	void storeThatFailedOutsideADecisionRecoversWhenItSaysSo() {
		// A settle or a renewal fails: the store's health changes without a decision's call.
		this.stores.storeAvailabilityChanged(LimitKind.CONCURRENCY, false, new IllegalStateException("READONLY"));
		assertThat(this.stores.failing()).containsOnlyKeys(LimitKind.CONCURRENCY);

		this.stores.storeAvailabilityChanged(LimitKind.CONCURRENCY, true, null);
		assertThat(this.stores.failing()).isEmpty();
	}

	@Test
	void failureStopsCountingARecentSpanAfterTheLastFailedCall() {
		this.stores.storeAvailabilityChanged(LimitKind.RATE_LIMIT, false, new IllegalStateException("NOSCRIPT"));
		this.time.advance(StoreAvailability.RECENT.minusSeconds(1));
		this.stores.storeCalled(LimitKind.RATE_LIMIT, 1000, false);
		this.time.advance(StoreAvailability.RECENT);
		assertThat(this.stores.failing()).as("the last failed call renewed it").containsOnlyKeys(LimitKind.RATE_LIMIT);

		this.time.advance(Duration.ofSeconds(1));
		assertThat(this.stores.failing()).as("no call for longer than the span: only PING speaks").isEmpty();
	}

	@Test
	void failuresOfAnOutageTheHealthCheckSawEndWithIt() {
		this.stores.storeAvailabilityChanged(LimitKind.BUDGET, false, new IllegalStateException("connection refused"));
		this.stores.unreachable();
		this.time.advance(Duration.ofSeconds(5));
		this.stores.reachable();
		assertThat(this.stores.failing()).as("no call since Redis came back: the outage's failures are over")
			.isEmpty();

		this.time.advance(Duration.ofSeconds(1));
		this.stores.storeCalled(LimitKind.BUDGET, 1000, false);
		assertThat(this.stores.failing()).as("a call failing after it counts again").containsOnlyKeys(LimitKind.BUDGET);

		this.stores.reachable();
		assertThat(this.stores.failing()).as("PING answering without an outage seen changes nothing")
			.containsOnlyKeys(LimitKind.BUDGET);
	}

}

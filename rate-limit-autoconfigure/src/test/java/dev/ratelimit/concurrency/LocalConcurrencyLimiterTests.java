package dev.ratelimit.concurrency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Local concurrency caps under a flood of new keys: a key whose calls are in
 * flight is never forgotten (a fresh bulkhead would hand out its permits a
 * second time); keys without calls are dropped; at the bound a new key takes
 * its permits from an overflow slot with the policy's permits, whatever the
 * failure mode, and gives them back there.
 */
class LocalConcurrencyLimiterTests {

	private static final int BOUND = 10;

	private final ManualTimeSource clock = new ManualTimeSource();

	private final KeyBound bound = new KeyBound(BOUND);

	private final LocalConcurrencyLimiter limiter = new LocalConcurrencyLimiter(this.bound, this.clock);

	private final ConcurrencyPolicy one = ConcurrencyPolicy.builder("one").permits(1).build();

	@Test
	void aFloodOfFreshKeysNeverFreesTheCapOfAKeyInFlight() {
		Permit held = this.limiter.acquire(this.one, "victim");
		for (int i = 0; i < 10_000; i++) {
			this.clock.advance(Duration.ofMillis(1));
			this.limiter.acquire(this.one, "fresh-" + i).release();
			if (i % 1_000 == 0) {
				assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
					.isThrownBy(() -> this.limiter.acquire(this.one, "victim"));
			}
		}
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> this.limiter.acquire(this.one, "victim"));
		assertThat(this.limiter.inUse(this.one, "victim")).isEqualTo(1);
		held.release();
		assertThat(this.limiter.inUse(this.one, "victim")).isZero();
	}

	@Test
	void atTheBoundOfKeysInFlightANewKeyTakesItsPermitsFromAnOverflowSlot() {
		ConcurrencyPolicy closed = ConcurrencyPolicy.builder("closed").permits(1).failureMode(FailureMode.CLOSED)
			.build();
		List<Permit> permits = new ArrayList<>();
		for (int i = 0; i < BOUND; i++) {
			permits.add(this.limiter.acquire(this.one, "k" + i));
			permits.add(this.limiter.acquire(closed, "k" + i));
		}
		this.clock.advance(Duration.ofSeconds(2));
		// Open or closed alike: the newcomer is capped by its slot's permits.
		for (ConcurrencyPolicy policy : List.of(this.one, closed)) {
			Permit onSlot = this.limiter.acquire(policy, "newcomer");
			assertThat(this.limiter.inUse(policy, "newcomer")).as("read on its slot").isEqualTo(1);
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
				.isThrownBy(() -> this.limiter.acquire(policy, "newcomer"));
			onSlot.release();
			assertThat(this.limiter.inUse(policy, "newcomer")).isZero();
		}
		assertThat(this.bound.of("one").overflowDecisions()).isEqualTo(2);
		assertThat(this.bound.of("closed").overflowDecisions()).isEqualTo(2);
		// Once a call ends its key is dropped at the next sweep, making room.
		permits.get(0).release();
		this.clock.advance(Duration.ofSeconds(2));
		this.limiter.acquire(this.one, "newcomer");
		assertThat(this.limiter.inUse(this.one, "newcomer")).isEqualTo(1);
		assertThat(this.bound.of("one").count()).isEqualTo(BOUND);
	}

	@Test
	void aPermitTakenOnASlotGoesBackToItEvenOnceItsKeyHasRoom() {
		KeyBound oneSlot = new KeyBound(1, 1, null);
		LocalConcurrencyLimiter limiter = new LocalConcurrencyLimiter(oneSlot, this.clock);
		ConcurrencyPolicy two = ConcurrencyPolicy.builder("two").permits(2).build();
		Permit held = limiter.acquire(two, "held");
		Permit first = limiter.acquire(two, "a");
		Permit second = limiter.acquire(two, "b");
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> limiter.acquire(two, "c"));
		// Room again, but the slot still has calls in flight: its keys stay on it.
		held.release();
		this.clock.advance(Duration.ofSeconds(2));
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> limiter.acquire(two, "a"));
		first.release();
		second.release();
		assertThat(limiter.inUse(two, "a")).isZero();
		assertThat(limiter.size()).isZero();
	}

	@Test
	void keysWithoutCallsInFlightAreDropped() {
		for (int i = 0; i < 5; i++) {
			this.limiter.acquire(this.one, "k" + i).release();
		}
		Permit held = this.limiter.acquire(this.one, "busy");
		assertThat(this.limiter.size()).isEqualTo(1);
		assertThat(this.bound.dropped()).isEqualTo(5);
		held.release();
	}

	@Test
	void releasingTwiceGivesOnePermitBack() {
		Permit permit = this.limiter.acquire(this.one, "k");
		permit.release();
		permit.release();
		Permit again = this.limiter.acquire(this.one, "k");
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> this.limiter.acquire(this.one, "k"));
		again.release();
	}

}

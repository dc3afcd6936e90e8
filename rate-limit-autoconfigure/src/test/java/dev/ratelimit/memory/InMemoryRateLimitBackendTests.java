package dev.ratelimit.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.core.Take;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class InMemoryRateLimitBackendTests {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(2).refill("1/1s").build();

	@Test
	void idleKeysAreDroppedOnceTheirBucketWouldBeFullAgain() {
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 1_000);
		for (int i = 0; i < 100; i++) {
			backend.tryConsume(this.policy, "k" + i, 1);
		}
		assertThat(backend.size()).isEqualTo(100);
		// not before the buckets are full again (2 s)...
		this.clock.advance(Duration.ofMillis(1_999));
		assertThat(backend.size()).isEqualTo(100);
		// ...and soon after: Caffeine's timer wheel has a granularity of about a second
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(backend.size()).isZero();
	}

	@Test
	void keyCountNeverExceedsTheBound() {
		KeyBound bound = new KeyBound(50);
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, bound);
		for (int i = 0; i < 10_000; i++) {
			backend.tryConsume(this.policy, "k" + i, 1);
		}
		assertThat(backend.size()).isEqualTo(50);
		assertThat(bound.of("p").overflowDecisions()).isEqualTo(10_000 - 50);
	}

	@Test
	void droppingAnIdleKeyChangesNoDecision() {
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 10);
		assertThat(backend.tryConsume(this.policy, "k", 2).allowed()).isTrue();
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(backend.size()).isZero();
		assertThat(backend.tryConsume(this.policy, "k", 2).allowed()).isTrue();
		assertThat(backend.tryConsume(this.policy, "k", 1).allowed()).isFalse();
	}

	@Test
	void manyThreadsOnOneKeyAreAdmittedExactlyTheCapacity() throws Exception {
		RateLimitPolicy slow = RateLimitPolicy.builder("slow").capacity(1_000).refill("1/1h").build();
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 10);
		ExecutorService pool = Executors.newFixedThreadPool(16);
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Integer>> results = new ArrayList<>();
		for (int t = 0; t < 16; t++) {
			results.add(pool.submit(() -> {
				start.await();
				int admitted = 0;
				for (int i = 0; i < 500; i++) {
					if (backend.tryConsume(slow, "hot", 1).allowed()) {
						admitted++;
					}
				}
				return admitted;
			}));
		}
		start.countDown();
		int total = 0;
		for (Future<Integer> result : results) {
			total += result.get(30, TimeUnit.SECONDS);
		}
		pool.shutdown();
		assertThat(total).isEqualTo(1_000);
	}

	@Test
	void aKeyInUseIsNotSweptWithTheIdleOnes() {
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 1_000);
		backend.tryConsume(this.policy, "idle", 2);
		backend.tryConsume(this.policy, "busy", 2);
		this.clock.advance(Duration.ofMillis(1_500));
		backend.tryConsume(this.policy, "busy", 1);
		this.clock.advance(Duration.ofMillis(1_000));
		// idle: 2.5 s unused, full again; busy: used 1 s ago, one token short of full
		assertThat(backend.size()).isEqualTo(1);
		assertThat(backend.tryConsume(this.policy, "busy", 2).allowed()).isFalse();
	}

	@Test
	void sweepsHappenOnInsertsWithoutAskingForTheSize() {
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 1_000);
		for (int i = 0; i < 100; i++) {
			backend.tryConsume(this.policy, "k" + i, 1);
		}
		this.clock.advance(Duration.ofSeconds(3));
		backend.tryConsume(this.policy, "new", 1);
		// size() sweeps too: count what the insert left via a clock that no longer moves
		assertThat(backend.size()).isEqualTo(1);
	}

	@Test
	void waitModeKeepsAKeyUntilWhatItOwesIsRepaid() {
		RateLimitPolicy waiting = RateLimitPolicy.builder("w")
			.capacity(2)
			.refill("1/1s")
			.maxWaitMicros(Duration.ofSeconds(3).toNanos() / 1_000)
			.build();
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 10);
		// 2 tokens taken, then 3 more owed: 5 s until the bucket is full again
		backend.tryConsume(waiting, "k", 2);
		for (int i = 0; i < 3; i++) {
			assertThat(backend.tryConsume(waiting, "k", 1).delayMicros()).isPositive();
		}
		this.clock.advance(Duration.ofMillis(4_500));
		assertThat(backend.size()).isEqualTo(1);
		// 1.5 tokens back: a forgotten key would report a full bucket of 2
		assertThat(backend.tryConsume(waiting, "k", 0).remaining()).isEqualTo(1);
	}

	@Test
	void atTheBoundANewKeyIsDecidedOnAnOverflowSlotAndNoHeldKeyIsForgotten() {
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 32);
		backend.tryConsume(this.policy, "hot", 2);
		for (int i = 0; i < 31; i++) {
			this.clock.advanceMicros(1);
			backend.tryConsume(this.policy, "k" + i, 1);
		}
		for (int i = 31; i < 100; i++) {
			this.clock.advanceMicros(1);
			backend.tryConsume(this.policy, "k" + i, 1);
		}
		assertThat(backend.size()).isEqualTo(32);
		// hot, the least recently used of all, kept its empty bucket; k0 kept its one token
		assertThat(backend.tryConsume(this.policy, "hot", 1).allowed()).isFalse();
		assertThat(backend.tryConsume(this.policy, "k0", 1).allowed()).isTrue();
		assertThat(backend.tryConsume(this.policy, "k0", 1).allowed()).isFalse();
	}

	@Test
	void aResetGivesItsRoomBack() {
		KeyBound bound = new KeyBound(1);
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, bound);
		backend.tryConsume(this.policy, "k", 2);
		backend.reset(this.policy, "k");
		assertThat(bound.of("p").count()).isZero();
		assertThat(backend.tryConsume(this.policy, "other", 1).allowed()).isTrue();
		assertThat(bound.of("p").count()).isEqualTo(1);
		assertThat(bound.of("p").overflowDecisions()).isZero();
	}

	@Test
	void keysSharingAnOverflowSlotShareOneLimit() {
		// One slot: every new key at the bound lands on it.
		KeyBound bound = new KeyBound(1, 1, null);
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, bound);
		backend.tryConsume(this.policy, "held", 1);
		assertThat(backend.tryConsume(this.policy, "a", 1).allowed()).isTrue();
		assertThat(backend.tryConsume(this.policy, "b", 1).allowed()).isTrue();
		assertThat(backend.tryConsume(this.policy, "c", 1).allowed()).isFalse();
		assertThat(backend.peek(this.policy, "d").remaining()).as("a key not held reads its slot").isZero();
		assertThat(backend.tryConsume(this.policy, "held", 1).allowed()).as("the held key keeps its own").isTrue();
	}

	@Test
	void twoKeysOfOneCallOnOneSlotAreDecidedTogether() {
		KeyBound bound = new KeyBound(1, 1, null);
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, bound);
		backend.tryConsume(this.policy, "held", 1);
		backend.tryConsume(this.policy, "a", 1);
		// One token left on the slot: two keys taking one each must not both pass, nor one alone be charged.
		List<Decision> both = backend
			.tryConsumeAll(List.of(new Acquisition(this.policy, "b", 1), new Acquisition(this.policy, "c", 1)));
		assertThat(both).noneMatch(Decision::allowed);
		assertThat(backend.tryConsume(this.policy, "d", 1).allowed()).isTrue();
	}

	@Test
	void unitsTakenOnAnOverflowSlotAreGivenBackToIt() {
		RateLimitPolicy window = RateLimitPolicy.builder("w")
			.algorithm(Algorithm.FIXED_WINDOW)
			.capacity(2)
			.window("1h")
			.build();
		KeyBound bound = new KeyBound(1, 1, null);
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, bound);
		backend.tryConsume(window, "held", 2);
		Take take = backend.tryTakeAll(List.of(new Acquisition(window, "newcomer", 2))).get(0);
		assertThat(take.decision().allowed()).isTrue();
		assertThat(backend.peek(window, "newcomer").remaining()).isZero();
		backend.giveBack(window, "newcomer", 2, take.receipt());
		assertThat(backend.peek(window, "newcomer").remaining()).isEqualTo(2);
		// The key's own state took nothing from the slot's receipt: held stays exhausted.
		assertThat(backend.peek(window, "held").remaining()).isZero();
	}

	@Test
	void resetStartsTheKeyAfresh() {
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 10);
		backend.tryConsume(this.policy, "k", 2);
		assertThat(backend.tryConsume(this.policy, "k", 1).allowed()).isFalse();
		backend.reset(this.policy, "k");
		assertThat(backend.tryConsume(this.policy, "k", 2).allowed()).isTrue();
		backend.reset(this.policy, "absent");
	}

	@Test
	void aLayeredCallNamingOneKeyTwiceDoesNotDeadlock() {
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 10);
		List<Decision> decisions = backend
			.tryConsumeAll(List.of(new Acquisition(this.policy, "k", 1), new Acquisition(this.policy, "k", 1)));
		assertThat(decisions).allMatch(Decision::allowed);
	}

	@Test
	void aBucketIdleForDecadesRefillsWithoutOverflow() {
		// 10^9 units a microsecond: decades of them overflow a long, and must simply mean full.
		RateLimitPolicy fast = RateLimitPolicy.builder("fast")
			.capacity(1_000_000_000L)
			.refill(Refill.of(1_000_000_000L, Duration.ofSeconds(1)))
			.build();
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 10);
		assertThat(backend.tryConsume(fast, "k", 1_000_000_000L).remaining()).isZero();
		this.clock.advance(Duration.ofDays(365L * 40));
		Decision decision = backend.tryConsume(fast, "k", 1);
		assertThat(decision.remaining()).isEqualTo(999_999_999L);
		assertThat(decision.resetAfterMicros()).isEqualTo(1);
	}

	@Test
	void layeredCallsOnManyThreadsAreAllOrNothing() throws Exception {
		RateLimitPolicy a = RateLimitPolicy.builder("a").capacity(1_000).refill("1/1h").build();
		RateLimitPolicy b = RateLimitPolicy.builder("b").capacity(500).refill("1/1h").build();
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 10);
		ExecutorService pool = Executors.newFixedThreadPool(8);
		List<Future<Integer>> results = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			boolean reversed = (t % 2 == 0);
			results.add(pool.submit(() -> {
				int admitted = 0;
				for (int i = 0; i < 200; i++) {
					List<Acquisition> call = reversed
							? List.of(new Acquisition(b, "rl:b:{x}", 1), new Acquisition(a, "rl:a:{x}", 1))
							: List.of(new Acquisition(a, "rl:a:{x}", 1), new Acquisition(b, "rl:b:{x}", 1));
					if (backend.tryConsumeAll(call).stream().allMatch(Decision::allowed)) {
						admitted++;
					}
				}
				return admitted;
			}));
		}
		int total = 0;
		for (Future<Integer> result : results) {
			total += result.get(30, TimeUnit.SECONDS);
		}
		pool.shutdown();
		assertThat(total).isEqualTo(500);
		// b ran out first and a was charged only with it
		assertThat(backend.tryConsume(a, "rl:a:{x}", 500).allowed()).isTrue();
		assertThat(backend.tryConsume(a, "rl:a:{x}", 1).allowed()).isFalse();
	}

	@Test
	void nonPositiveBoundIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> new InMemoryRateLimitBackend(this.clock, 0))
			.withMessageContaining("0");
	}

}

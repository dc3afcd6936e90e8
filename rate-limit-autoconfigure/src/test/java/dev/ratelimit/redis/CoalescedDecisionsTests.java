package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.budget.InMemoryBudgetStore;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.PermitStore;
import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Take;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.memory.InMemoryRateLimitBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coalesced decisions are the decisions one call each would make: a random
 * timeline of every kind of decision (every rate-limit algorithm alone, a
 * layered decision, give-backs of what earlier decisions took, budget
 * reservations, settles and releases, distributed permits acquired and
 * released), at explicit times, goes through the stores three ways: queued
 * behind a call in flight on a connection that coalesces them (at most four to
 * a call, so that rounds split into several batches), one call per decision on
 * a connection that does not coalesce, and in memory, the reference. Each round
 * queues its decisions in a known order, from threads of their own as requests
 * would, then lets them go; every verdict and every remaining value must be the
 * same three ways (memory has no distributed permits: those compare the two
 * Redis ways).
 */
class CoalescedDecisionsTests extends SharedRedisTests {

	/** 2026-01-01T00:00:00Z. */
	private static final long START = 1_767_225_600_000_000L;

	private static final long SECOND = 1_000_000L;

	/** Periods of minutes: no key's TTL, kept on Redis' own clock, ends while the test runs. */
	private static final List<RateLimitPolicy> POLICIES = List.of(
			policy(Algorithm.TOKEN_BUCKET, 5, "5/2m", null), policy(Algorithm.LEAKY_BUCKET, 4, "4/2m", null),
			policy(Algorithm.LEAKY_BUCKET_SHAPING, 3, "3/1m", null), policy(Algorithm.FIXED_WINDOW, 6, null, "2m"),
			policy(Algorithm.SLIDING_WINDOW_LOG, 4, null, "2m"), policy(Algorithm.SLIDING_WINDOW_COUNTER, 5, null, "3m"));

	private static final BudgetPolicy BUDGET = BudgetPolicy.builder("spend")
		.limit("1h", "5.00")
		.reservationTimeout(Duration.ofMinutes(30))
		.build();

	private static final ConcurrencyPolicy CAP = ConcurrencyPolicy.builder("cap")
		.permits(3)
		.scope(ConcurrencyPolicy.Scope.DISTRIBUTED)
		.permitTtl(Duration.ofMinutes(30))
		.build();

	private final AtomicLong now = new AtomicLong(START);

	private final TimeSource clock = this.now::get;

	private final ExecutorService requests = Executors.newFixedThreadPool(16);

	private LettuceConnectionFactory coalescing;

	private LettuceConnectionFactory oneByOne;

	private DecisionCoalescer coalescer;

	private Stack coalesced;

	private Stack single;

	private Stack memory;

	@BeforeEach
	void stacks() {
		this.coalescing = server.newConnectionFactory(new RedisLimiterConnection.Coalescing(true, 4));
		this.oneByOne = server.newConnectionFactory(RedisLimiterConnection.Coalescing.OFF);
		DecisionCoalescer found = ((LimiterLettuceConnectionFactory) this.coalescing).coalescer();
		assertThat(found).as("the coalescing factory's coalescer").isNotNull();
		assertThat(((LimiterLettuceConnectionFactory) this.oneByOne).coalescer()).isNull();
		this.coalescer = found;
		this.coalesced = new Stack("c", new RedisRateLimitBackend(this.coalescing, this.clock),
				new RedisBudgetStore(this.coalescing, this.clock), new RedisPermitStore(this.coalescing, this.clock));
		this.single = new Stack("s", new RedisRateLimitBackend(this.oneByOne, this.clock),
				new RedisBudgetStore(this.oneByOne, this.clock), new RedisPermitStore(this.oneByOne, this.clock));
		this.memory = new Stack("m", new InMemoryRateLimitBackend(this.clock, 10_000),
				new InMemoryBudgetStore(this.clock, 10_000), null);
	}

	@AfterEach
	void close() {
		this.requests.shutdownNow();
		this.coalescing.destroy();
		this.oneByOne.destroy();
	}

	@Test
	void coalescedDecisionsOfEveryKindAreTheDecisionsOfOneCallEach() throws Exception {
		Random random = new Random(46L);
		List<Integer> sizes = new ArrayList<>();
		this.coalescer.onBatch(sizes::add);
		Timeline timeline = new Timeline();
		int decisions = 0;
		for (int round = 0; round < 120; round++) {
			List<Step> steps = timeline.round(random, 1 + random.nextInt(12));
			List<String> coalescedOutcomes = queuedThenReleased(steps);
			List<String> aloneOutcomes = new ArrayList<>();
			List<String> memoryOutcomes = new ArrayList<>();
			for (Step step : steps) {
				this.now.set(step.at());
				aloneOutcomes.add(step.op().apply(this.single));
				memoryOutcomes.add(step.op().apply(this.memory));
			}
			for (int i = 0; i < steps.size(); i++) {
				Step step = steps.get(i);
				String alone = aloneOutcomes.get(i);
				assertThat(coalescedOutcomes.get(i)).as("round %d, step %d of %s, coalesced: %s, one at a time: %s",
						round, i, steps, coalescedOutcomes, aloneOutcomes).isEqualTo(alone);
				String reference = memoryOutcomes.get(i);
				if (reference != null) {
					assertThat(reference).as("round %d, %s in memory", round, step.op()).isEqualTo(alone);
				}
				timeline.happened(step, alone);
			}
			decisions += steps.size();
		}
		// Batches of several, split at four, and decisions of every kind among them.
		assertThat(sizes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(decisions);
		assertThat(sizes).contains(4).anyMatch((size) -> size > 1 && size < 4);
		assertThat(timeline.kinds).containsKeys("decide", "layered", "give-back", "reserve", "settle", "release",
				"acquire", "release-permit");
		assertThat(timeline.kinds.values()).allMatch((count) -> count >= 10);
	}

	@Test
	void aBatchWhoseCallFailsFailsEachDecisionAsItsOwnCallWould() throws Exception {
		List<Step> steps = List.of(new Step(START, new Decide(0, POLICIES.get(0), "k0", 1)),
				new Step(START, new Layered(1, "k0")), new Step(START, new Reserve(2, "r2", 100)),
				new Step(START, new Acquire("p3")), new Step(START, new Decide(4, POLICIES.get(4), "k1", 1)));
		// Over maxmemory, Redis refuses every call that may write before it runs: the batch, and each alone.
		server.call("CONFIG", "SET", "maxmemory-policy", "noeviction");
		server.call("CONFIG", "SET", "maxmemory", "1");
		try {
			Runnable release = this.coalescer.hold();
			List<Future<String>> outcomes = new ArrayList<>();
			try {
				for (int i = 0; i < steps.size(); i++) {
					Step step = steps.get(i);
					outcomes.add(this.requests.submit(() -> failureOf(step.op(), this.coalesced)));
					assertThat(awaitQueued(i + 1, outcomes.get(i))).isTrue();
				}
			}
			finally {
				release.run();
			}
			for (int i = 0; i < steps.size(); i++) {
				String alone = failureOf(steps.get(i).op(), this.single);
				assertThat(alone).as("%s alone", steps.get(i).op()).contains("OOM");
				assertThat(outcomes.get(i).get(30, TimeUnit.SECONDS)).as("%s coalesced", steps.get(i).op())
					.isEqualTo(alone);
			}
		}
		finally {
			server.call("CONFIG", "SET", "maxmemory", "0");
		}
	}

	/** The failure a decision ends in: its class and message. */
	private static String failureOf(Op op, Stack stack) {
		try {
			return "no failure: " + op.apply(stack);
		}
		catch (RuntimeException ex) {
			return ex.getClass().getName() + ": " + ex.getMessage() + ", from "
					+ NestedExceptionUtils.getMostSpecificCause(ex);
		}
	}

	/**
	 * Queues the steps behind a held call, each from its own thread, in their
	 * order and at their times, then lets them go and returns their outcomes.
	 */
	private List<String> queuedThenReleased(List<Step> steps) throws Exception {
		Runnable release = this.coalescer.hold();
		List<Future<String>> outcomes = new ArrayList<>();
		int queued = 0;
		try {
			for (Step step : steps) {
				this.now.set(step.at());
				Future<String> outcome = this.requests.submit(() -> step.op().apply(this.coalesced));
				outcomes.add(outcome);
				if (awaitQueued(queued + 1, outcome)) {
					queued++;
				}
			}
		}
		finally {
			release.run();
		}
		List<String> each = new ArrayList<>();
		for (Future<String> outcome : outcomes) {
			each.add(outcome.get(30, TimeUnit.SECONDS));
		}
		return each;
	}

	/**
	 * Waits until the coalescer holds {@code count} calls, the last one
	 * submitted queued, or that one ended without a call to Redis (every call is
	 * held): returns whether it queued.
	 */
	private boolean awaitQueued(int count, Future<String> last) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (this.coalescer.held() + this.coalescer.waiting() < count) {
			if (last.isDone()) {
				return false;
			}


			assertThat(System.nanoTime()).as("decision %d queued within 10 s (held %d, waiting %d, in flight %d)",
					count, this.coalescer.held(), this.coalescer.waiting(), this.coalescer.inFlight())
				.isLessThan(deadline);
			LockSupport.parkNanos(100_000);
		}
		return true;
	}

	/** What a timeline did, for the steps that refer to earlier ones. */
	private static final class Timeline {

		private final Map<String, Integer> kinds = new HashMap<>();

		/** Takes that took something and were not given back: their step's number. */
		private final List<Integer> takes = new ArrayList<>();

		private final List<String> reservations = new ArrayList<>();

		private final List<String> permits = new ArrayList<>();

		private int steps;

		private long at = START;

		/** The steps of a round: only steps of earlier rounds are given back, settled or released. */
		List<Step> round(Random random, int count) {
			List<Step> round = new ArrayList<>();
			List<Integer> takesBefore = new ArrayList<>(this.takes);
			List<String> reservationsBefore = new ArrayList<>(this.reservations);
			List<String> permitsBefore = new ArrayList<>(this.permits);
			for (int i = 0; i < count; i++) {
				if (random.nextInt(3) == 0) {
					this.at += random.nextLong(40 * SECOND);
				}
				int number = this.steps++;
				Op op = switch (random.nextInt(10)) {
					case 0, 1 -> new Decide(number, POLICIES.get(random.nextInt(POLICIES.size())),
							"k" + random.nextInt(2), random.nextInt(3));
					case 2 -> new Layered(number, "k" + random.nextInt(2));
					case 3, 4 -> takesBefore.isEmpty() ? new Reserve(number, "r" + number, 1 + random.nextInt(100))
							: new GiveBack(takesBefore.remove(random.nextInt(takesBefore.size())));
					case 5 -> new Reserve(number, "r" + number, 1 + random.nextInt(100));
					case 6, 7 -> reservationsBefore.isEmpty() ? new Acquire("p" + number)
							: (random.nextBoolean()
									? new Settle(reservationsBefore.remove(random.nextInt(reservationsBefore.size())),
											random.nextInt(150))
									: new Release(reservationsBefore.remove(random.nextInt(reservationsBefore.size()))));
					case 8 -> new Acquire("p" + number);
					default -> permitsBefore.isEmpty() ? new Acquire("p" + number)
							: new ReleasePermit(permitsBefore.remove(random.nextInt(permitsBefore.size())));
				};
				round.add(new Step(this.at, op));
			}
			return round;
		}

		/** Notes what a step did, as the decisions one call each made it. */
		void happened(Step step, String outcome) {
			Op op = step.op();
			this.kinds.merge(op.kind(), 1, Integer::sum);
			// A shaping queue gives nothing back: what it took is already paced.
			if (op instanceof Decide decide && outcome.contains("receipt")
					&& decide.policy().algorithm() != Algorithm.LEAKY_BUCKET_SHAPING) {
				this.takes.add(decide.number());
			}
			else if (op instanceof GiveBack giveBack) {
				this.takes.remove(Integer.valueOf(giveBack.take()));
			}
			else if (op instanceof Reserve reserve && outcome.startsWith("BudgetDecision[allowed=true")) {
				this.reservations.add(reserve.id());
			}
			else if (op instanceof Settle settle) {
				this.reservations.remove(settle.id());
			}
			else if (op instanceof Release release) {
				this.reservations.remove(release.id());
			}
			else if (op instanceof Acquire acquire && outcome.startsWith("granted")) {
				this.permits.add(acquire.id());
			}
			else if (op instanceof ReleasePermit release) {
				this.permits.remove(release.id());
			}
		}

	}

	private record Step(long at, Op op) {
	}

	/** One decision, made on a stack; its outcome as text, or {@code null} where the stack has no such store. */
	private sealed interface Op permits Decide, Layered, GiveBack, Reserve, Settle, Release, Acquire, ReleasePermit {

		@Nullable String apply(Stack stack);

		String kind();

	}

	private record Decide(int number, RateLimitPolicy policy, String key, long cost) implements Op {

		@Override
		public String apply(Stack stack) {
			Take take = stack.rates()
				.tryTakeAll(List.of(new Acquisition(this.policy, stack.key(this.policy.name() + ":" + this.key),
						this.cost)))
				.get(0);
			if (take.receipt() != null && take.decision().allowed() && this.cost > 0) {
				stack.takes().put(this.number, new Taken(this.policy, this.key, this.cost, take.receipt()));
				return take.decision() + " receipt";
			}
			return take.decision().toString();
		}

		@Override
		public String kind() {
			return "decide";
		}

	}

	/** A token bucket and a fixed window, all or nothing. */
	private record Layered(int number, String key) implements Op {

		@Override
		public String apply(Stack stack) {
			return stack.rates()
				.tryConsumeAll(List.of(new Acquisition(POLICIES.get(0), stack.key("layered-a:" + this.key), 1),
						new Acquisition(POLICIES.get(3), stack.key("layered-b:" + this.key), 1)))
				.toString();
		}

		@Override
		public String kind() {
			return "layered";
		}

	}

	private record GiveBack(int take) implements Op {

		@Override
		public String apply(Stack stack) {
			Taken taken = stack.takes().remove(this.take);
			assertThat(taken).as("the take %d given back", this.take).isNotNull();
			stack.rates()
				.giveBack(taken.policy(), stack.key(taken.policy().name() + ":" + taken.key()), taken.cost(),
						taken.receipt());
			// What the give-back left shows in the next decision on the key.
			return "given back " + taken.cost();
		}

		@Override
		public String kind() {
			return "give-back";
		}

	}

	private record Reserve(int number, String id, long cents) implements Op {

		@Override
		public String apply(Stack stack) {
			return stack.budgets().reserve(BUDGET, stack.key("tenant"), this.id, this.cents * 10_000L).toString();
		}

		@Override
		public String kind() {
			return "reserve";
		}

	}

	private record Settle(String id, long cents) implements Op {

		@Override
		public String apply(Stack stack) {
			return stack.budgets().settle(BUDGET, stack.key("tenant"), this.id, this.cents * 10_000L).toString();
		}

		@Override
		public String kind() {
			return "settle";
		}

	}

	private record Release(String id) implements Op {

		@Override
		public String apply(Stack stack) {
			return stack.budgets().release(BUDGET, stack.key("tenant"), this.id).toString();
		}

		@Override
		public String kind() {
			return "release";
		}

	}

	private record Acquire(String id) implements Op {

		@Override
		public @Nullable String apply(Stack stack) {
			PermitStore permits = stack.permits();
			if (permits == null) {
				return null;
			}
			PermitStore.Attempt attempt = permits.tryAcquire(CAP, stack.key("provider"), this.id);
			return (attempt.granted() ? "granted " : "refused ") + attempt;
		}

		@Override
		public String kind() {
			return "acquire";
		}

	}

	private record ReleasePermit(String id) implements Op {

		@Override
		public @Nullable String apply(Stack stack) {
			PermitStore permits = stack.permits();
			if (permits == null) {
				return null;
			}
			permits.release(CAP, stack.key("provider"), this.id);
			// What the release left shows in the next acquisition's holders.
			return "released";
		}

		@Override
		public String kind() {
			return "release-permit";
		}

	}

	private record Taken(RateLimitPolicy policy, String key, long cost, String receipt) {
	}

	/** One way of deciding: its stores, and its own keys on the shared server. */
	private record Stack(String prefix, RateLimitBackend rates, BudgetStore budgets, @Nullable PermitStore permits,
			Map<Integer, Taken> takes) {

		Stack(String prefix, RateLimitBackend rates, BudgetStore budgets, @Nullable PermitStore permits) {
			this(prefix, rates, budgets, permits, new java.util.concurrent.ConcurrentHashMap<>());
		}

		String key(String name) {
			return "rl:" + this.prefix + ":{" + name + "}";
		}

	}

	private static RateLimitPolicy policy(Algorithm algorithm, long capacity, @Nullable String refill,
			@Nullable String window) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder("coalesced-" + algorithm).algorithm(algorithm)
			.capacity(capacity);
		return (refill != null) ? builder.refill(refill).build() : builder.window(window).build();
	}

}

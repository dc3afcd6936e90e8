package dev.ratelimit.failover;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.event.MovedRedirectionEvent;
import io.lettuce.core.resource.ClientResources;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.StoreHealth;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.support.CapturedLog;
import dev.ratelimit.support.RedisReplicatedClusterFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis Cluster failovers under load, tried as a user would: three masters
 * with a replica each, two application instances configured with
 * {@code spring.data.redis.cluster.nodes} only (Spring Boot's default client
 * options refresh no topology), threads on both calling a per-user rate limit
 * and a tenant's budget. The limiter's own connection follows the cluster:
 * after a killed master's replica is promoted its slots are decided on it
 * again, the other shards keep deciding on Redis meanwhile, the dead shard is
 * one warning, and after a planned failover no decision is redirected twice.
 */
class ClusterFailoverTests {

	private static final long COST_MICROS = 20_000;

	private static final long BUDGET_MICROS = 1_000_000;

	private static final int RATE_LIMIT = 50;

	private RedisReplicatedClusterFixture cluster;

	private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private final AtomicInteger probes = new AtomicInteger();

	@AfterEach
	void stop() {
		this.instances.forEach(ConfigurableApplicationContext::close);
		if (this.cluster != null) {
			this.cluster.close();
		}
	}

	@Test
	void killedMastersSlotsAreDecidedOnItsReplicaOnceItIsPromotedAndTheOtherShardsNeverStop() {
		// Full coverage off, as docs/redis.md advises: a shard down then stops only its own slots.
		this.cluster = RedisReplicatedClusterFixture.start(false);
		startInstances();
		int tenantSlot = SlotHash.getSlot(FailoverLoad.TENANT);
		int dead = this.cluster.masterPortForSlot(tenantSlot);
		FailoverLoad load = FailoverLoad.start(this.instances, 4, 8, COST_MICROS, 150);
		try (CapturedLog health = CapturedLog.of(StoreHealth.class)) {
			await().atMost(Duration.ofSeconds(30)).until(() -> load.settled() >= 10);
			this.cluster.killMaster(dead);
			long killedAt = System.nanoTime();
			// Another shard's keys are decided on Redis throughout.
			int healthy = this.cluster.masterPorts().stream().filter((port) -> port != dead).findFirst().orElseThrow();
			for (int i = 0; i < 20; i++) {
				assertThat(decidedOn(healthy)).as("a key of a healthy shard decided on its master").isTrue();
			}
			int promoted = this.cluster.awaitPromotion(dead, Duration.ofSeconds(30));
			long promotedAt = System.nanoTime();
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> decidedOn(promoted));
			long backAt = System.nanoTime();
			// The dead master comes back as the replica that makes the shard's budget writes safe again.
			this.cluster.restart(dead);
			await().atMost(Duration.ofSeconds(60))
				.until(() -> load.budgetRefused() >= 20 && load.rateRefusedEverywhere(RATE_LIMIT));
			report("master " + dead + " killed, " + promoted + " promoted after "
					+ TimeUnit.NANOSECONDS.toMillis(promotedAt - killedAt) + " ms, its slots decided on it "
					+ TimeUnit.NANOSECONDS.toMillis(backAt - promotedAt) + " ms after the promotion", load);
			load.close();
			List<String> failed = health.messages()
				.stream()
				.filter((line) -> line.contains("failed on 127.0.0.1:" + dead))
				.toList();
			// Never one per call: a failure met while the connection followed the failover it had warned of
			// itself is at debug level; at most one per instance and kind of limit for any other.
			assertThat(failed).as("lines about the dead shard").hasSizeLessThanOrEqualTo(6);
		}
		finally {
			load.close();
		}
		assertNothingLostNothingOverspent(load);
	}

	@Test
	void aFrozenMasterStopsOnlyItsOwnKeysUntilItsReplicaTakesItsSlots() {
		this.cluster = RedisReplicatedClusterFixture.start(false);
		startInstances();
		int frozen = this.cluster.masterPortForSlot(0);
		int healthy = this.cluster.masterPorts().stream().filter((port) -> port != frozen).findFirst().orElseThrow();
		RedisLimiterConnection connection = this.instances.get(0).getBean(RedisLimiterConnection.class);
		this.cluster.pause(frozen);
		try {
			// The first call on the frozen node waits out the timeout; its node is silent from then on.
			decideOnNode(frozen);
			await().atMost(Duration.ofSeconds(5)).until(() -> !connection.silence().silentNodes().isEmpty());
			assertThat(connection.silence().silentNodes()).containsOnlyKeys("127.0.0.1:" + frozen);
			assertThat(connection.silence().isSilent()).as("Redis as a whole").isFalse();
			for (int i = 0; i < 20; i++) {
				assertThat(decidedOn(healthy)).as("a key of a healthy shard decided on its master").isTrue();
			}
			int promoted = this.cluster.awaitPromotion(frozen, Duration.ofSeconds(30));
			long promotedAt = System.nanoTime();
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> decidedOn(promoted));
			System.out.println("[failover] master " + frozen + " frozen, " + promoted + " promoted; its slots decided "
					+ "on it " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - promotedAt)
					+ " ms after the promotion; silent nodes now " + connection.silence().silentNodes());
			await().atMost(Duration.ofSeconds(5)).until(() -> connection.silence().silentNodes().isEmpty());
		}
		finally {
			this.cluster.resume(frozen);
		}
	}

	@Test
	void aSlotMigratedUnderLoadKeepsEveryBudgetExact() {
		this.cluster = RedisReplicatedClusterFixture.start();
		startInstances();
		int slot = SlotHash.getSlot(FailoverLoad.TENANT);
		int source = this.cluster.masterPortForSlot(slot);
		int target = this.cluster.masterPorts().stream().filter((port) -> port != source).findFirst().orElseThrow();
		FailoverLoad load = FailoverLoad.start(this.instances, 4, 8, COST_MICROS, 100);
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> load.settled() >= 10);
			int moved = this.cluster.migrateSlot(slot, target);
			assertThat(this.cluster.masterPortForSlot(slot)).isEqualTo(target);
			await().atMost(Duration.ofSeconds(60)).until(() -> load.budgetRefused() >= 20);
			report("slot " + slot + " (" + moved + " keys) migrated from " + source + " to " + target, load);
		}
		finally {
			load.close();
		}
		assertNothingLostNothingOverspent(load);
		// Nothing of the budget stayed behind on the source.
		assertThat(this.cluster.call(source, "CLUSTER", "COUNTKEYSINSLOT", Integer.toString(slot))).isEqualTo(":0");
	}

	@Test
	void afterAPlannedFailoverNoDecisionIsRedirectedMoreThanOnce() {
		this.cluster = RedisReplicatedClusterFixture.start();
		startInstances();
		int master = this.cluster.masterPortForSlot(0);
		// Callers whose keys live on that master's shard, each decided once after the failover.
		List<String> callers = new ArrayList<>();
		for (int i = 0; callers.size() < 200; i++) {
			if (this.cluster.masterPortForSlot(SlotHash.getSlot("caller-" + i)) == master) {
				callers.add("caller-" + i);
			}
		}
		ClientResources resources = this.instances.get(0).getBean(ClientResources.class);
		Map<String, AtomicInteger> redirects = new ConcurrentHashMap<>();
		Disposable watching = resources.eventBus()
			.get()
			.filter(MovedRedirectionEvent.class::isInstance)
			.map(MovedRedirectionEvent.class::cast)
			.subscribe((event) -> redirects.computeIfAbsent(event.getKey(), (k) -> new AtomicInteger())
				.incrementAndGet());
		try {
			for (String caller : callers) {
				decide(caller);
			}
			assertThat(redirects).as("redirects before the failover").isEmpty();
			this.cluster.failover(this.cluster.replicaOf(master));
			for (String caller : callers) {
				decide(caller);
			}
			int redirected = redirects.size();
			assertThat(redirects.values()).as("redirects per decision").allMatch((count) -> count.get() == 1);
			redirects.clear();
			for (String caller : callers) {
				decide(caller);
			}
			assertThat(redirects).as("redirects once the topology was read").isEmpty();
			System.out.println("[failover] planned CLUSTER FAILOVER: " + redirected + " of " + callers.size()
					+ " decisions after it redirected once (until the first MOVED's refresh), none twice, "
					+ "then none");
		}
		finally {
			watching.dispose();
		}
	}

	private void assertNothingLostNothingOverspent(FailoverLoad load) {
		assertThat(load.errors()).as("calls that failed with an error of the limiter's own: %s", load).isZero();
		for (ConfigurableApplicationContext instance : this.instances) {
			CostBudgets budgets = instance.getBean(CostBudgets.class);
			// Every write kept through the failover applied: settles, and releases of reservations that got no answer.
			await().atMost(Duration.ofSeconds(60)).until(() -> budgets.pendingWrites() == 0);
		}
		BudgetPolicy chat = this.instances.get(0).getBean(LimitRegistry.class).budgets().find("chat").orElseThrow();
		BudgetDecision state = this.instances.get(0).getBean(CostBudgets.class).remaining(chat, FailoverLoad.TENANT);
		assertThat(load.settled() * COST_MICROS).as("spent by calls that ran: %s", load)
			.isLessThanOrEqualTo(BUDGET_MICROS);
		assertThat(state.spentMicros()[0]).as("spent as Redis counts it: %s", load)
			.isEqualTo(load.settled() * COST_MICROS);
		assertThat(state.reservedMicros()).as("still reserved").isZero();
		// The dead shard's users were decided by the local fallback meanwhile: each instance its local share.
		assertThat(load.allowedByUser().values()).as("calls allowed per user").allMatch((n) -> n <= 2 * RATE_LIMIT);
	}

	private void report(String what, FailoverLoad load) {
		System.out.println("[failover] " + what + ": " + load);
		for (ConfigurableApplicationContext instance : this.instances) {
			RedisLimiterConnection connection = instance.getBean(RedisLimiterConnection.class);
			System.out.println("[failover]   instance: failovers " + connection.failovers() + ", last "
					+ connection.lastFailover());
		}
	}

	/** Decides a fresh key of the given master's slots and says whether its state is there. */
	private boolean decidedOn(int port) {
		String key;
		do {
			key = "probe-" + this.probes.incrementAndGet();
		}
		while (this.cluster.masterPortForSlot(SlotHash.getSlot(key)) != port);
		decide(key);
		String storageKey = this.instances.get(0).getBean(LimitKeys.class).build("per-user", key);
		return ":1".equals(this.cluster.call(port, "EXISTS", storageKey));
	}

	/** Decides a fresh key of the given master's slots, whatever the outcome. */
	private void decideOnNode(int port) {
		String key;
		do {
			key = "probe-" + this.probes.incrementAndGet();
		}
		while (this.cluster.masterPortForSlot(SlotHash.getSlot(key)) != port);
		decide(key);
	}

	private void decide(String key) {
		ConfigurableApplicationContext instance = this.instances.get(0);
		RateLimitPolicy perUser = instance.getBean(LimitRegistry.class).rateLimits().find("per-user").orElseThrow();
		instance.getBean(RateLimiter.class).acquire(List.of(new LimitRequest(perUser, key, 1)));
	}

	private void startInstances() {
		for (int i = 0; i < 2; i++) {
			this.instances.add(new SpringApplicationBuilder(FailoverTestApplication.class)
				.web(WebApplicationType.NONE)
				.properties("spring.main.banner-mode=off",
						"spring.data.redis.cluster.nodes=" + this.cluster.ports()
							.stream()
							.map((port) -> "127.0.0.1:" + port)
							.collect(Collectors.joining(",")),
						"rate-limit.backend=redis", "rate-limit.redis.timeout=300ms",
						"rate-limit.policies.per-user.capacity=" + RATE_LIMIT,
						"rate-limit.policies.per-user.refill=" + RATE_LIMIT + "/1h",
						"rate-limit.policies.per-user.local-instances=2",
						// Each probe a fresh key: none is refused from the deny cache without a Redis call.
						"rate-limit.redis.deny-cache.enabled=false", "rate-limit.budgets.chat.amount=1.00",
						"rate-limit.budgets.chat.window=day", "rate-limit.budgets.chat.unit=USD")
				.run());
		}
	}

}

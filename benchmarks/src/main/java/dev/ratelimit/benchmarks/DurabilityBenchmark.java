package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.benchmarks.RedisDecisionBenchmark.Decider;
import dev.ratelimit.benchmarks.RedisDecisionBenchmark.Result;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.redis.LimiterConnectionFactories;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.redis.RedisRateLimitBackend;

/**
 * What waiting for a replica costs a rate-limit decision
 * ({@code rate-limit.redis.durability.rate-limits: replicated}): the same
 * token-bucket decisions on the limiter's own connection to a primary with one
 * replica, both {@code redis-server}s started here, acknowledged by the
 * primary alone and by its replica too ({@code WAIT 1}, one marker and one
 * {@code WAIT} per batch of decisions that arrived meanwhile). Decisions per
 * second, latency percentiles and the primary's commands per decision, with 1
 * and 64 callers, one hot key and 10,000 keys, in rounds that alternate the two
 * cases.
 * <p>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.DurabilityBenchmark
 * [--seconds 6] [--warmup 3] [--rounds 3]}
 */
public final class DurabilityBenchmark {

	private static final int MANY_KEYS = 10_000;

	private DurabilityBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		run(Options.parse(args));
	}

	static List<Result> run(Options options) throws Exception {
		int seconds = options.integer("seconds", 6);
		int warmup = options.integer("warmup", 3);
		int rounds = options.integer("rounds", 3);
		int perRound = Math.max(1, Math.round(seconds / (float) rounds));
		List<Result> results = new ArrayList<>();
		try (RedisServerProcess primary = RedisServerProcess.start();
				RedisServerProcess replica = RedisServerProcess.start()) {
			replica.call("REPLICAOF", "127.0.0.1", Integer.toString(primary.port()));
			awaitReplica(primary, replica);
			System.out.printf(Locale.ROOT, "redis-server %s primary on port %d, replica on port %d; %ds warm-up, "
					+ "%d rounds of %ds measured per case%n", primary.version(), primary.port(), replica.port(), warmup,
					rounds, perRound);
			RedisLimiterConnection acknowledged = connect(primary, RedisLimiterConnection.Durability.NONE);
			RedisLimiterConnection replicated = connect(primary,
					new RedisLimiterConnection.Durability(EnumSet.of(LimitKind.RATE_LIMIT), 1, Duration.ofMillis(250)));
			try {
				String[] keyNames = new String[MANY_KEYS];
				for (int k = 0; k < MANY_KEYS; k++) {
					keyNames[k] = "rl:bench:{user-" + k + "}";
				}
				RateLimitPolicy policy = ProductionCommand.tokenBucket("bench");
				Map<String, Decider> deciders = new LinkedHashMap<>();
				RedisRateLimitBackend primaryOnly = new RedisRateLimitBackend(acknowledged);
				deciders.put("acknowledged by the primary", (k) -> primaryOnly.tryConsume(policy, keyNames[k], 1).allowed());
				RedisRateLimitBackend durable = new RedisRateLimitBackend(replicated);
				deciders.put("replicated (WAIT 1)", (k) -> durable.tryConsume(policy, keyNames[k], 1).allowed());
				for (Decider decider : deciders.values()) {
					RedisDecisionBenchmark.run(decider, MANY_KEYS, 64, warmup, false);
				}
				for (int threads : new int[] { 1, 64 }) {
					for (int keys : new int[] { 1, MANY_KEYS }) {
						Map<String, List<Result>> measured = new LinkedHashMap<>();
						List<String> names = new ArrayList<>(deciders.keySet());
						for (int round = 0; round < rounds; round++) {
							for (int i = 0; i < names.size(); i++) {
								String name = names.get((i + round) % names.size());
								primary.call("CONFIG", "RESETSTAT");
								Result one = RedisDecisionBenchmark.run(deciders.get(name), keys, threads, perRound, true);
								measured.computeIfAbsent(name, (n) -> new ArrayList<>())
									.add(new Result(name, keys, one.decisions(), one.denied(), one.seconds(),
											one.latenciesNanos(),
											RedisDecisionBenchmark.commandStats(primary.call("INFO", "commandstats"))));
							}
						}
						double base = 0;
						for (String name : names) {
							Result result = Result.merge(measured.get(name));
							results.add(result);
							base = (base == 0) ? result.perSecond() : base;
							System.out.printf(Locale.ROOT, "%-30s threads=%-3d keys=%-6d %9.0f decisions/s (%.2fx)  p50 "
									+ "%7.1f us  p99 %7.1f us  commands/decision %.3f %s%n", name, threads, keys,
									result.perSecond(), result.perSecond() / base, result.percentileMicros(0.50),
									result.percentileMicros(0.99), result.commandsPerDecision(), result.commands());
						}
					}
				}
			}
			finally {
				acknowledged.close();
				replicated.close();
			}
		}
		return results;
	}

	private static RedisLimiterConnection connect(RedisServerProcess server, RedisLimiterConnection.Durability durability) {
		LettuceConnectionFactory application = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", server.port()));
		RedisLimiterConnection limiter = new RedisLimiterConnection(application, Duration.ofSeconds(2),
				Duration.ofSeconds(2), Duration.ofSeconds(10), true, durability,
				LimiterConnectionFactories.DEFAULT_REFRESH_PERIOD);
		limiter.connect();
		if (!limiter.isConnected()) {
			limiter.close();
			throw new IllegalStateException("The limiter could not connect: " + limiter.lastConnectFailure());
		}
		return limiter;
	}

	/**
	 * Waits until writes on the primary reach its replica: after a full sync the
	 * primary streams nothing to the replica until its first acknowledgement,
	 * up to a second later, and a WAIT meanwhile counts no replica.
	 */
	private static void awaitReplica(RedisServerProcess primary, RedisServerProcess replica)
			throws InterruptedException {
		for (int attempt = 0; attempt < 200; attempt++) {
			String key = "bench:replication-probe-" + attempt;
			primary.call("SET", key, "1");
			Thread.sleep(50);
			boolean reached = ":1".equals(replica.call("EXISTS", key));
			primary.call("DEL", key);
			if (reached) {
				return;
			}
		}
		throw new IllegalStateException("Writes on the primary do not reach its replica");
	}

}

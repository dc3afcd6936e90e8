package dev.ratelimit.outage;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Brute force against a service whose CPU is saturated: two instances on one
 * real Redis, busy threads taking every core beside 64 callers, and each trial
 * 64 wrong passwords at once for one user of a policy that allows 5. Under
 * such load a limiter call can wait well over its timeout for the threads
 * that send it and read its reply (and for Redis) to get a core; if the
 * limiter took that for an outage, the policy's failure mode would decide,
 * and a fail-open policy let those attempts through unchecked (measured
 * before: 5 to 40 of 64 checked).
 */
class BusyMachineTests {

	static final RedisServerFixture redis = RedisServerFixture.start();

	static final int TRIALS = 20;

	static final int ATTEMPTS = 64;

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void sixtyFourParallelWrongPasswordsOnASaturatedMachineAreCheckedAtMostFiveTimes() {
		// The policy as the sample ships it, with the starter's defaults for everything else.
		List<String> properties = List.of("rate-limit.policies.failed-logins.algorithm=fixed-window",
				"rate-limit.policies.failed-logins.capacity=5", "rate-limit.policies.failed-logins.window=15m");
		TwoInstances.run(redis, properties, (first, second) -> {
			AtomicBoolean busy = new AtomicBoolean(true);
			List<Thread> spinners = saturate(busy);
			try {
				List<Integer> checked = new ArrayList<>();
				for (int trial = 0; trial < TRIALS; trial++) {
					String user = "victim-" + trial;
					List<Callable<Boolean>> attempts = new ArrayList<>();
					for (int i = 0; i < ATTEMPTS; i++) {
						TwoInstances.Instance instance = (i % 2 == 0) ? first : second;
						attempts.add(() -> instance.allowed("failed-logins", user));
					}
					checked.add((int) TwoInstances.inParallel(attempts).stream().filter((allowed) -> allowed).count());
				}
				assertThat(checked).as("passwords checked in each of %d trials (fell back: %d and %d)", TRIALS,
						first.counting.fellBack.get(), second.counting.fellBack.get())
					.allSatisfy((count) -> assertThat(count).isLessThanOrEqualTo(5));
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
			finally {
				busy.set(false);
				spinners.forEach(Thread::interrupt);
			}
		});
	}

	/** Four busy threads per core, until told to stop. */
	private static List<Thread> saturate(AtomicBoolean busy) {
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < 4 * Runtime.getRuntime().availableProcessors(); i++) {
			Thread thread = new Thread(() -> {
				long x = 0;
				while (busy.get()) {
					x = x * 6364136223846793005L + 1442695040888963407L;
				}
				if (x == 42) {
					System.out.print("");
				}
			}, "busy-" + i);
			thread.setDaemon(true);
			thread.start();
			threads.add(thread);
		}
		return threads;
	}

}

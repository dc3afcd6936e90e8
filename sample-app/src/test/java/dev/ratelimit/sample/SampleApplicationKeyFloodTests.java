package dev.ratelimit.sample;

import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The key flood of issue 27 against the sample as shipped, over HTTP, on the
 * memory backend with {@code max-keys: 1000}: while 4,000 fresh
 * {@code X-User-Id}s fill {@code agent-runs} past its bound (the clock stands
 * still, so none of them is fresh again), a user who starts calling then is
 * admitted at most the free plan's 5, however often it calls, and a user
 * exhausted before the flood stays refused. Before overflow slots, such a
 * newcomer's key was refused by the full store and the policy's failure mode
 * let every call through: 34 of 34.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "rate-limit.memory.max-keys=1000")
@Import(SampleApplicationHttpTests.ManualClock.class)
class SampleApplicationKeyFloodTests {

	private static final int FLOOD = 4_000;

	private static final int FREE_CAPACITY = 5;

	@LocalServerPort
	int port;

	@Autowired
	ManualTimeSource clock;

	@Autowired
	MeterRegistry meters;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = TestHttp.on(this.port);
		this.clock.advance(Duration.ofHours(1));
	}

	@Test
	void aNewcomerDuringAFloodOfFreshKeysIsAdmittedAtMostItsLimit() throws Exception {
		for (int i = 0; i < FREE_CAPACITY; i++) {
			assertThat(run("victim").status()).isEqualTo(200);
		}
		assertThat(run("victim").status()).isEqualTo(429);
		int newcomerCalls = 0;
		int newcomerAdmitted = 0;
		for (int i = 0; i < FLOOD; i++) {
			assertThat(run("fresh-" + i).status()).as("fresh key %d", i).isIn(200, 429);
			// The newcomer starts once the flood has filled the store, and calls between the flood's requests.
			if (i >= 1_000 && i % 100 == 0) {
				newcomerCalls++;
				if (run("newcomer").status() == 200) {
					newcomerAdmitted++;
				}
				assertThat(run("victim").status()).as("victim after %d fresh keys", i).isEqualTo(429);
			}
		}
		assertThat(newcomerCalls).isEqualTo(30);
		assertThat(newcomerAdmitted).as("newcomer admitted of %d calls", newcomerCalls)
			.isLessThanOrEqualTo(FREE_CAPACITY);
		assertThat(this.meters.get("rate.limit.memory.overflow.decisions")
			.tag("policy", "agent-runs")
			.functionCounter()
			.count()).isGreaterThan(0);
	}

	private Answer run(String user) throws Exception {
		return this.http.postJson("/agent/run", "{}", "X-User-Id", user);
	}

}

package dev.ratelimit.aop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

import dev.ratelimit.CostBudget;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetMeter;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.support.TestHttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Streams served by a real server to a real client, reporting their usage
 * token by token through their {@link BudgetMeter}: each settles to what it
 * reported — when it completes, when its client goes away, when it is stopped
 * at its reservation — and a failed one follows the on-error rule but is
 * charged its reported usage at least. A token costs 2 micro-units, the
 * estimate is 5 tokens unless a test says otherwise.
 */
@SpringBootTest(classes = StreamingBudgetWebTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.budgets.keep.amount=1.00", "rate-limit.budgets.keep.key=header('X-Tenant-Id')",
				"rate-limit.budgets.release.amount=1.00", "rate-limit.budgets.release.key=header('X-Tenant-Id')",
				"rate-limit.budgets.release.on-error=release", "rate-limit.budgets.growing.amount=0.000040",
				"rate-limit.budgets.growing.key=header('X-Tenant-Id')", "rate-limit.budgets.growing.on-overrun=extend" })
class StreamingBudgetWebTests {

	private static final long TOKEN = 2;

	private static final long ESTIMATE = 5 * TOKEN;

	private static final String PADDING = "#" + "-".repeat(99) + "\n";

	private static final ExecutorService writers = Executors.newCachedThreadPool();

	@LocalServerPort
	int port;

	@Autowired
	Streams streams;

	@Autowired
	CostBudgets budgets;

	@Autowired
	LimitRegistry limits;

	private final String tenant = "t-" + UUID.randomUUID();

	@BeforeEach
	void reset() {
		this.streams.reset();
	}

	@AfterAll
	static void stopWriters() {
		writers.shutdownNow();
	}

	@Test
	void sseStreamIsChargedWhatItReported() {
		List<String> lines = get("/sse/keep?tokens=4");
		assertThat(lines).filteredOn((line) -> line.startsWith("data:")).hasSize(4);
		assertSettled("keep", 4 * TOKEN, 1_000_000 - 4 * TOKEN);
	}

	@Test
	void sseStreamPastItsReservationIsStoppedAtIt() {
		List<String> lines = get("/sse/keep?tokens=8");
		assertThat(lines).filteredOn((line) -> line.startsWith("data:tok")).hasSize(5);
		assertThat(lines).contains("event:budget-exceeded");
		assertSettled("keep", ESTIMATE, 1_000_000 - ESTIMATE);
	}

	@Test
	void failedSseStreamWithOnErrorKeepIsChargedItsReservation() {
		get("/sse/keep?tokens=3&fail=true");
		assertSettled("keep", ESTIMATE, 1_000_000 - ESTIMATE);
	}

	@Test
	void failedSseStreamWithOnErrorReleaseIsChargedWhatItReported() {
		get("/sse/release?tokens=3&fail=true");
		assertSettled("release", 3 * TOKEN, 1_000_000 - 3 * TOKEN);
	}

	@Test
	void sseStreamWhoseClientGoesAwayIsChargedWhatItReportedUntilThen() throws Exception {
		long used = readThenGoAway("/sse/keep?tokens=100000&estimate=0.50", "data:tok3");
		// Sent until a write failed: more than what was read, far less than the reservation.
		assertThat(used).isGreaterThanOrEqualTo(3 * TOKEN).isLessThan(500_000);
		assertSettled("keep", used, 1_000_000 - used);
	}

	@Test
	void extendingSseStreamGrowsItsReservationWhileTheBudgetAllowsAndStopsWhenNot() {
		// 9 tokens on an estimate of 5: one extension of another estimate, 18 charged of 40.
		assertThat(get("/sse/growing?tokens=9")).filteredOn((line) -> line.startsWith("data:tok")).hasSize(9);
		assertSettled("growing", 9 * TOKEN, 40 - 9 * TOKEN);
		// 22 left: 5 tokens reserved, 5 more, then a whole estimate no longer fits but one token does, then none.
		List<String> lines = get("/sse/growing?tokens=20");
		assertThat(lines).filteredOn((line) -> line.startsWith("data:tok")).hasSize(11);
		assertThat(lines).contains("event:budget-exceeded");
		assertSettled("growing", 40, 0);
	}

	@Test
	void streamingBodyIsChargedWhatItReported() {
		assertThat(tokenLines("/body/keep?tokens=4")).containsExactly("tok1", "tok2", "tok3", "tok4");
		assertSettled("keep", 4 * TOKEN, 1_000_000 - 4 * TOKEN);
	}

	@Test
	void streamingBodyPastItsReservationIsStoppedAtIt() {
		assertThat(tokenLines("/body/keep?tokens=8")).containsExactly("tok1", "tok2", "tok3", "tok4", "tok5",
				"budget-exceeded");
		assertSettled("keep", ESTIMATE, 1_000_000 - ESTIMATE);
	}

	@Test
	void streamingBodyWhoseClientGoesAwayIsChargedWhatItReportedUntilThen() throws Exception {
		long used = readThenGoAway("/body/keep?tokens=100000&estimate=0.50", "tok3");
		assertThat(used).isGreaterThanOrEqualTo(3 * TOKEN).isLessThan(500_000);
		assertSettled("keep", used, 1_000_000 - used);
	}

	@Test
	void failedStreamingBodyWithOnErrorReleaseIsChargedWhatItReported() {
		get("/body/release?tokens=3&fail=true");
		assertSettled("release", 3 * TOKEN, 1_000_000 - 3 * TOKEN);
	}

	private List<String> tokenLines(String path) {
		return get(path).stream().filter((line) -> !line.startsWith("#")).toList();
	}

	private List<String> get(String path) {
		try {
			return TestHttp.on(this.port).get(path, "X-Tenant-Id", this.tenant).body().lines().toList();
		}
		catch (UncheckedIOException ex) {
			// A failed stream may end the response abruptly: what was received is not the point.
			return List.of();
		}
	}

	/**
	 * Reads a stream up to a line, closes the connection, lets the stream go on
	 * writing, and returns the usage it reported when its write failed.
	 */
	private long readThenGoAway(String path, String until) throws Exception {
		try (Socket socket = new Socket("localhost", this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nX-Tenant-Id: " + this.tenant
					+ "\r\nConnection: close\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			BufferedReader in = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
			String line;
			do {
				line = in.readLine();
				assertThat(line).as("stream ended before " + until).isNotNull();
			}
			while (!line.equals(until));
			// Reset at once rather than closed gracefully: the server's next writes fail.
			socket.setSoLinger(true, 0);
		}
		// Only the emitter streams wait for this; they write on once the client is gone.
		this.streams.clientGone.countDown();
		assertThat(this.streams.writeFailed.await(20, TimeUnit.SECONDS)).isTrue();
		return this.streams.usedWhenWriteFailed.get();
	}

	private void assertSettled(String budget, long spentMicros, long remainingMicros) {
		// The server settles when the stream ends, on its own thread: wait for that, not for time.
		await().atMost(Duration.ofSeconds(20)).until(() -> state(budget).reservedMicros() == 0);
		BudgetDecision state = state(budget);
		assertThat(state.spentMicros()).containsExactly(spentMicros);
		assertThat(state.remainingMicros()).containsExactly(remainingMicros);
	}

	private BudgetDecision state(String budget) {
		return this.budgets.remaining(this.limits.budgets().find(budget).orElseThrow(), this.tenant);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Streams streams() {
			return new Streams();
		}

		@Bean
		StreamController streamController(Streams streams) {
			return new StreamController(streams);
		}

	}

	/** What the streams tell the test, shared with it (the controller is a proxy). */
	static class Streams {

		volatile CountDownLatch clientGone;

		volatile CountDownLatch writeFailed;

		final AtomicLong usedWhenWriteFailed = new AtomicLong(-1);

		void reset() {
			this.clientGone = new CountDownLatch(1);
			this.writeFailed = new CountDownLatch(1);
			this.usedWhenWriteFailed.set(-1);
		}

		/** After three tokens, waits until the test's client went away. */
		void pace(int token) throws InterruptedException {
			if (token == 4) {
				this.clientGone.await(20, TimeUnit.SECONDS);
			}
		}

		void writeFailed(BudgetMeter meter) {
			this.usedWhenWriteFailed.set(meter.usedMicros());
			this.writeFailed.countDown();
		}

	}

	@RestController
	static class StreamController {

		private final Streams streams;

		StreamController(Streams streams) {
			this.streams = streams;
		}

		@CostBudget(value = "keep", estimate = "#estimate")
		@GetMapping("/sse/keep")
		SseEmitter sseKeep(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam int tokens,
				@RequestParam(defaultValue = "false") boolean fail,
				@RequestParam(defaultValue = "0.00001") String estimate) {
			return sse(BudgetMeter.current(), tokens, fail, !"0.00001".equals(estimate));
		}

		@CostBudget(value = "release", estimate = "0.00001")
		@GetMapping("/sse/release")
		SseEmitter sseRelease(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam int tokens,
				@RequestParam(defaultValue = "false") boolean fail) {
			return sse(BudgetMeter.current(), tokens, fail, false);
		}

		@CostBudget(value = "growing", estimate = "0.00001")
		@GetMapping("/sse/growing")
		SseEmitter sseGrowing(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam int tokens) {
			return sse(BudgetMeter.current(), tokens, false, false);
		}

		@CostBudget(value = "keep", estimate = "#estimate")
		@GetMapping("/body/keep")
		StreamingResponseBody bodyKeep(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam int tokens,
				@RequestParam(defaultValue = "0.00001") String estimate) {
			return body(BudgetMeter.current(), tokens, false);
		}

		@CostBudget(value = "release", estimate = "0.00001")
		@GetMapping("/body/release")
		StreamingResponseBody bodyRelease(@RequestHeader("X-Tenant-Id") String tenant, @RequestParam int tokens,
				@RequestParam(defaultValue = "false") boolean fail) {
			return body(BudgetMeter.current(), tokens, fail);
		}

		/**
		 * Streams tokens from another thread, reporting each before sending it.
		 * @param paced whether to wait for the client to go away after three tokens
		 * (the streams with a large estimate)
		 */
		private SseEmitter sse(BudgetMeter meter, int tokens, boolean fail, boolean paced) {
			// A paced stream's client goes away: Tomcat usually reports the failed write at once, but not
			// always, and then the stream ends at its timeout, which also counts as the client gone. Keep
			// that timeout well inside the test's wait for the settle.
			SseEmitter emitter = new SseEmitter(paced ? 5_000L : 30_000L);
			writers.execute(() -> {
				try {
					for (int token = 1; token <= tokens; token++) {
						if (paced) {
							this.streams.pace(token);
						}
						if (!meter.add("0.000002")) {
							emitter.send(SseEmitter.event().name("budget-exceeded").data("stopped"));
							break;
						}
						try {
							emitter.send("tok" + token);
						}
						catch (IOException ex) {
							this.streams.writeFailed(meter);
							return;
						}
					}
					if (fail) {
						emitter.completeWithError(new IllegalStateException("provider down"));
					}
					else {
						emitter.complete();
					}
				}
				catch (IOException | InterruptedException ex) {
					emitter.completeWithError(ex);
				}
			});
			return emitter;
		}

		/**
		 * Writes tokens, a line each and a padding line after each, reporting each
		 * before writing it. Spring MVC buffers a streaming body (its flushes do
		 * nothing), so a stream whose client goes away is not paced: it writes on
		 * until the buffers between it and the client are full and its write fails.
		 */
		private StreamingResponseBody body(BudgetMeter meter, int tokens, boolean fail) {
			return (out) -> {
				for (int token = 1; token <= tokens; token++) {
					if (!meter.add("0.000002")) {
						out.write("budget-exceeded\n".getBytes(StandardCharsets.UTF_8));
						return;
					}
					try {
						out.write(("tok" + token + "\n" + PADDING).getBytes(StandardCharsets.UTF_8));
						out.flush();
					}
					catch (IOException ex) {
						this.streams.writeFailed(meter);
						throw ex;
					}
				}
				if (fail) {
					throw new IllegalStateException("provider down");
				}
			};
		}

	}

}

package dev.ratelimit.sample;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code POST /agent/chat/stream} over real HTTP: the answer streams as
 * Server-Sent Events, and the tenant's daily budget is charged the tokens
 * streamed, not the {@code maxTokens} reserved before the stream started.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class ChatStreamHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	CostBudgets budgets;

	@Autowired
	LimitRegistry limits;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = TestHttp.on(this.port);
	}

	@Test
	void streamedAnswerIsChargedTheTokensItStreamed() throws Exception {
		Answer response = this.http.postJson("/agent/chat/stream",
				"{\"prompt\":\"the answer is forty two\",\"maxTokens\":1000}", "X-Tenant-Id", "acme-stream");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("text/event-stream"));
		assertThat(dataOf(response, "token")).containsExactly("the", "answer", "is", "forty", "two");
		// Sent before the stream started: what remained once the 1000-token estimate was reserved.
		assertThat(response.headers().firstValue("Budget-Remaining"))
			.hasValueSatisfying((field) -> assertThat(field).contains("r=\"0.998000\""));
		// 5 tokens at $0.000002, not the estimate.
		assertSpent("acme-stream", 10);
	}

	@Test
	void answerLongerThanItsMaxTokensStopsAtItsReservation() throws Exception {
		Answer response = this.http.postJson("/agent/chat/stream",
				"{\"prompt\":\"one two three four five\",\"maxTokens\":3}", "X-Tenant-Id", "globex-stream");
		assertThat(dataOf(response, "token")).containsExactly("one", "two", "three");
		assertThat(response.body()).contains("event:budget-exceeded");
		assertSpent("globex-stream", 6);
	}

	private static List<String> dataOf(Answer response, String event) {
		List<String> lines = response.body().lines().toList();
		return java.util.stream.IntStream.range(0, lines.size() - 1)
			.filter((i) -> lines.get(i).equals("event:" + event))
			.mapToObj((i) -> lines.get(i + 1).substring("data:".length()))
			.toList();
	}

	private void assertSpent(String tenant, long micros) {
		// Settled on the server's thread when the stream ended: wait for that, not for time.
		await().atMost(Duration.ofSeconds(10)).until(() -> state(tenant).reservedMicros() == 0);
		assertThat(state(tenant).spentMicros()).containsExactly(micros);
	}

	private BudgetDecision state(String tenant) {
		return this.budgets.remaining(this.limits.budgets().find("tenant-daily").orElseThrow(), tenant);
	}

}

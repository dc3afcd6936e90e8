package dev.ratelimit.sample.reactive;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The reactive sample's chat over real HTTP on the memory backend: a call
 * through the provider {@code WebClient} is charged what the provider reports,
 * and a streamed answer reports each token to the tenant's budget before
 * sending it, stops at its reservation and is charged what it sent. A token
 * costs $0.000002 (2 micro-dollars).
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class ReactiveChatHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	CostBudgets budgets;

	@Autowired
	LimitRegistry limits;

	@Autowired
	SimulatedProvider provider;

	@Test
	void aChatIsChargedWhatTheProviderReported() {
		Answer answer = chat("/agent/chat", "acme", "one two three four", 100);
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.body()).contains("\"tokens\":4");
		assertThat(answer.header("Budget-Remaining")).startsWith("\"tenant-daily\";");
		assertSettled("acme", 8);
	}

	@Test
	void aStreamIsChargedTheTokensItSent() {
		Answer answer = chat("/agent/chat/stream", "globex", "alpha beta gamma", 100);
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.body()).contains("data:alpha").contains("data:gamma").contains("event:done");
		assertSettled("globex", 6);
	}

	@Test
	void aStreamPastItsReservationStopsThereWithABudgetExceededEvent() {
		// maxTokens 2 reserves 4 micro-dollars; the prompt would need 5 tokens.
		Answer answer = chat("/agent/chat/stream", "initech", "a b c d e", 2);
		assertThat(answer.body()).contains("data:a").contains("data:b").doesNotContain("data:c")
			.contains("event:budget-exceeded");
		assertSettled("initech", 4);
	}

	@Test
	void theProviderWebClientKeepsToTheProvidersCap() {
		for (int i = 0; i < 3; i++) {
			assertThat(chat("/agent/chat", "umbrella", "x", 10).status()).isEqualTo(200);
		}
		assertThat(this.provider.maxInFlight()).isLessThanOrEqualTo(4);
		assertThat(this.provider.served()).isGreaterThanOrEqualTo(3);
	}

	@Test
	void aChatWithoutATenantIsA400() {
		assertThat(TestHttp.on(this.port).postJson("/agent/chat", TestHttp.json(new ChatRequest("hi", 10)))
			.status()).isEqualTo(400);
	}

	private Answer chat(String path, String tenant, String prompt, int maxTokens) {
		return TestHttp.on(this.port).postJson(path, TestHttp.json(new ChatRequest(prompt, maxTokens)), "X-Tenant-Id",
				tenant);
	}

	/** Settled once the call's work ended, which may come just after its client read the answer. */
	private void assertSettled(String tenant, long spentMicros) {
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			BudgetDecision state = this.budgets.remaining(budget(), tenant);
			assertThat(state.spentMicros()).containsExactly(spentMicros);
			assertThat(state.reservedMicros()).isZero();
		});
	}

	private BudgetPolicy budget() {
		return this.limits.budgets().find("tenant-daily").orElseThrow();
	}

}

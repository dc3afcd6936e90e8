package dev.ratelimit.web.contract;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.support.HeldCalls;
import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The web contract's scenarios, written once and run on every stack: a Spring
 * MVC application, a WebFlux application and a Spring Cloud Gateway route,
 * each on memory and on Redis (subclasses). The same requests get the same
 * answers everywhere: status, header fields, problem body. Route scenarios
 * ({@code /r/...}) run against route rules, or a gateway route's filters;
 * annotation scenarios ({@code /a/<style>/...}) against handler methods of each
 * style a stack offers (a WebFlux handler returning {@code Mono},
 * {@code Flux} or a plain value). A stack that cannot offer a scenario says
 * why ({@link #cannot}), and the scenario is reported as aborted with that
 * reason, never passed.
 * <p>
 * The limits are {@code web-contract/limits.properties}; each scenario's caller
 * has a key of its own, so scenarios and stacks never share a bucket.
 */
public abstract class WebContractScenarios {

	/** The problem type of a caller over its own limit. */
	private static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** The problem type of the service short of capacity. */
	private static final String REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types"
			+ "#temporary-reduced-capacity";

	/** What scenarios a stack may not be able to offer. */
	public enum Scenario {

		/** A limit annotated on a handler method of the application. */
		ANNOTATED_HANDLER,

		/** A client that goes away while its call is in flight. */
		CANCELLATION,

		/** A call held in flight by an annotated handler, for its concurrency cap. */
		HELD_ANNOTATED_CALL,

		/** A limit decided on a frozen Redis. */
		FROZEN_REDIS,

		/** The actuator's endpoints, served beside a route cap on every path. */
		MANAGEMENT_ENDPOINTS

	}

	/** The application's port: every stack runs on a server of its own. */
	@LocalServerPort
	protected int port;

	/**
	 * Returns a client of the application under test.
	 * @return the client
	 */
	protected TestHttp http() {
		return TestHttp.on(this.port);
	}

	/**
	 * Returns the styles of annotated handler methods the stack offers, each
	 * serving {@code /a/<style>/...}: none for a gateway route.
	 * @return the styles
	 */
	protected abstract List<String> handlerStyles();

	/**
	 * Says why the stack cannot offer a scenario, for a style of handler.
	 * @param scenario the scenario
	 * @param style the handler style, or {@code null} for a route scenario
	 * @return why not, or {@code null} when it can
	 */
	protected @Nullable String cannot(Scenario scenario, @Nullable String style) {
		return null;
	}

	/**
	 * Returns the Redis the stack decides on, to freeze.
	 * @return the Redis, or {@code null} on the memory backend
	 */
	protected @Nullable RedisServerFixture redis() {
		return null;
	}

	// Route scenarios

	@Test
	void aRouteAnswersTheContract() {
		contract("/r/contract/ok", "c-route");
	}

	@Test
	void aRouteLimitTheCallerMayNotSeeAnswers503NamingNothing() {
		hidden("/r/hidden/ok");
	}

	@Test
	void aRouteRefusesAMissingKeyItsPolicyRejectsWith400() {
		missingKey("/r/missing/ok");
	}

	@Test
	void aRouteDecidesEachCallerByItsPlan() {
		String free = caller();
		Answer first = http().get("/r/plans/ok", "X-User-Id", free, "X-Plan", "free");
		assertThat(first.status()).isEqualTo(200);
		assertThat(first.rateLimitPolicy()).isEqualTo("\"c-plans\";q=1;w=3600");
		assertThat(http().get("/r/plans/ok", "X-User-Id", free, "X-Plan", "free").status()).isEqualTo(429);
		String pro = caller();
		for (int remaining = 2; remaining >= 0; remaining--) {
			Answer allowed = http().get("/r/plans/ok", "X-User-Id", pro, "X-Plan", "pro");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.rateLimitPolicy()).isEqualTo("\"c-plans\";q=3;w=10800");
			assertThat(allowed.rateLimit()).startsWith("\"c-plans\";r=" + remaining + ";");
		}
		assertThat(http().get("/r/plans/ok", "X-User-Id", pro, "X-Plan", "pro").status()).isEqualTo(429);
	}

	@Test
	void aRouteLetsAnExemptCallerThrough() {
		String user = caller();
		for (int i = 0; i < 3; i++) {
			Answer exempt = http().get("/r/exempt/ok", "X-User-Id", user, "X-Internal", "yes");
			assertThat(exempt.status()).as("exempt call %d", i).isEqualTo(200);
			assertThat(exempt.rateLimit()).isNull();
		}
		assertThat(http().get("/r/exempt/ok", "X-User-Id", user).status()).isEqualTo(200);
		assertThat(http().get("/r/exempt/ok", "X-User-Id", user).status()).isEqualTo(429);
	}

	@Test
	void aRouteCountingByOutcomeCountsOnlyTheListedStatuses() {
		String user = caller();
		for (int i = 0; i < 3; i++) {
			// Each one's unit comes back once its answer is complete: on WebFlux, just after the client has it.
			eventually("/r/outcome/ok", user, 200);
		}
		eventually("/r/outcome/fail", user, 500);
		Answer refused = http().get("/r/outcome/ok", "X-User-Id", user);
		assertThat(refused.status()).isEqualTo(429);
		assertQuotaExceeded(refused, "/r/outcome/ok", "c-outcome");
	}

	/**
	 * A handler that throws a status (Spring MVC resolves it inside the chain,
	 * WebFlux after the filters) counts by that status, not as a server error:
	 * the route counts only 500s, so the 401's unit comes back.
	 */
	@Test
	void aRouteCountingByOutcomeCountsAThrownStatusAsItsAnswer() {
		String user = caller();
		assertThat(http().get("/r/outcome/thrown", "X-User-Id", user).status()).isEqualTo(401);
		eventually("/r/outcome/ok", user, 200);
	}

	/**
	 * A cap that refuses a call its policies allowed gives back what they
	 * counted by outcome: the route counts 503s, and the cap's own 503 costs
	 * the caller nothing.
	 */
	@Test
	void aRouteCapsRefusalCostsNothingCountedByOutcome() {
		String holder = caller();
		String user = caller();
		String id = UUID.randomUUID().toString();
		CompletableFuture<Answer> held = http().sendAsync("GET", "/r/capped/hold?id=" + id, "X-User-Id", holder);
		HeldCalls.entered(id).orTimeout(10, TimeUnit.SECONDS).join();
		try {
			Answer refused = http().get("/r/capped/ok", "X-User-Id", user);
			assertThat(refused.status()).isEqualTo(503);
			assertThat(body(refused).path("type").asString()).isEqualTo(REDUCED_CAPACITY);
		}
		finally {
			HeldCalls.release(id);
		}
		assertThat(held.orTimeout(10, TimeUnit.SECONDS).join().status()).isEqualTo(200);
		eventually("/r/capped/ok", user, 200);
	}

	@Test
	void aRouteCapRefusesASecondCallInFlightAndFreesItsPermitOnceServed() {
		heldCallIsCapped("/r/cap/hold", "/r/cap/ok", "c-cap");
	}

	/**
	 * A cap on every path, saturated: an application path is shed, but the
	 * health probe and the other management endpoints still answer, so that a
	 * load balancer does not pull the instance for being busy. The cap counts
	 * only callers sending {@code X-Everywhere}, so other scenarios never meet it.
	 */
	@Test
	void aRouteCapOnEveryPathLeavesTheManagementEndpointsAnswered() {
		offered(Scenario.MANAGEMENT_ENDPOINTS, null);
		String key = caller();
		String id = UUID.randomUUID().toString();
		CompletableFuture<Answer> held = http().sendAsync("GET", "/r/everywhere/hold?id=" + id, "X-Everywhere", key);
		HeldCalls.entered(id).orTimeout(10, TimeUnit.SECONDS).join();
		try {
			Answer shed = http().get("/r/everywhere/ok", "X-Everywhere", key);
			assertThat(shed.status()).isEqualTo(503);
			Answer health = http().get("/actuator/health", "X-Everywhere", key);
			assertThat(health.status()).isEqualTo(200);
			assertThat(health.body()).contains("UP");
		}
		finally {
			HeldCalls.release(id);
		}
		assertThat(held.orTimeout(10, TimeUnit.SECONDS).join().status()).isEqualTo(200);
	}

	@Test
	void aRouteCapGivesItsPermitBackWhenTheClientGoesAway() {
		offered(Scenario.CANCELLATION, null);
		cancelledCallFreesItsPermit("/r/cap/hold", "/r/cap/ok");
	}

	@Test
	void eachFailureModeAppliesOnAFrozenRedis() {
		offered(Scenario.FROZEN_REDIS, null);
		RedisServerFixture redis = redis();
		String user = caller();
		// Decided once while Redis answers, so that the limiter's connection is open before Redis freezes.
		assertThat(http().get("/r/open/ok", "X-User-Id", caller()).status()).isEqualTo(200);
		redis.pause();
		try {
			for (int i = 0; i < 2; i++) {
				Answer open = http().get("/r/open/ok", "X-User-Id", user);
				assertThat(open.status()).as("open call %d", i).isEqualTo(200);
			}
			Answer closed = http().get("/r/closed/ok", "X-User-Id", user);
			assertThat(closed.status()).isEqualTo(503);
			assertThat(body(closed).path("type").asString()).isEqualTo(REDUCED_CAPACITY);
			assertThat(closed.retryAfter()).isNotNull();
			assertThat(http().get("/r/local/ok", "X-User-Id", user).status()).isEqualTo(200);
			assertThat(http().get("/r/local/ok", "X-User-Id", user).status()).isEqualTo(429);
		}
		finally {
			redis.resume();
		}
	}

	// Annotation scenarios, for each style of handler

	@Test
	void anAnnotatedHandlerAnswersTheContract() {
		for (String style : styles()) {
			contract("/a/" + style + "/contract", "a-contract");
		}
	}

	@Test
	void anAnnotatedLimitTheCallerMayNotSeeAnswers503NamingNothing() {
		for (String style : styles()) {
			hidden("/a/" + style + "/hidden");
		}
	}

	@Test
	void anAnnotatedHandlerRefusesAMissingKeyItsPolicyRejectsWith400() {
		for (String style : styles()) {
			missingKey("/a/" + style + "/missing");
		}
	}

	@Test
	void anAnnotatedHandlerCountingByOutcomeCountsOnlyFailures() {
		for (String style : styles()) {
			String user = caller();
			String path = "/a/" + style + "/outcome";
			for (int i = 0; i < 3; i++) {
				eventually(path, user, 200);
			}
			eventually(path + "?fail=true", user, 500);
			Answer refused = http().get(path, "X-User-Id", user);
			assertThat(refused.status()).as(style).isEqualTo(429);
			assertQuotaExceeded(refused, path, "a-outcome");
		}
	}

	@Test
	void anAnnotatedBudgetAnswersWithItsFieldAndRefusesOnceSpent() {
		for (String style : styles()) {
			String user = caller();
			String path = "/a/" + style + "/budget";
			Answer first = http().get(path, "X-User-Id", user);
			assertThat(first.status()).as(style).isEqualTo(200);
			assertThat(first.header("Budget-Remaining")).as(style)
				.startsWith("\"a-budget\";w=\"day\";r=\"0.600000\";q=\"1.000000\";u=\"USD\";t=");
			assertThat(http().get(path, "X-User-Id", user).status()).as(style).isEqualTo(200);
			Answer refused = http().get(path, "X-User-Id", user);
			assertThat(refused.status()).as(style).isEqualTo(429);
			assertThat(body(refused).path("type").asString()).isEqualTo(QUOTA_EXCEEDED);
			assertThat(refused.body()).as(style).contains("a-budget");
			assertThat(refused.retryAfter()).as(style).isNotNull();
		}
	}

	@Test
	void anAnnotatedBudgetAnswersWithWhatRemainsOnceSettled() {
		for (String style : styles()) {
			String user = caller();
			String path = "/a/" + style + "/settled-budget";
			Answer answer = http().get(path, "X-User-Id", user);
			assertThat(answer.status()).as(style).isEqualTo(200);
			// 1.00 less the actual 0.10, settled before the answer went out; a stream's field goes out before its
			// first element, once the estimate (0.40) is reserved, and cannot be updated as the stream goes.
			String remaining = style.equals("flux") ? "0.600000" : "0.900000";
			assertThat(answer.header("Budget-Remaining")).as(style)
				.startsWith("\"a-budget\";w=\"day\";r=\"" + remaining + "\";q=\"1.000000\";u=\"USD\";t=");
		}
	}

	@Test
	void anAnnotatedCapRefusesASecondCallInFlightAndFreesItsPermitOnceServed() {
		for (String style : styles()) {
			if (cannot(Scenario.HELD_ANNOTATED_CALL, style) == null) {
				heldCallIsCapped("/a/" + style + "/cap", "/a/" + style + "/cap", "a-cap");
			}
		}
		offeredForEveryStyle(Scenario.HELD_ANNOTATED_CALL);
	}

	@Test
	void anAnnotatedCapGivesItsPermitBackWhenTheClientGoesAway() {
		for (String style : styles()) {
			if (cannot(Scenario.HELD_ANNOTATED_CALL, style) == null && cannot(Scenario.CANCELLATION, style) == null) {
				cancelledCallFreesItsPermit("/a/" + style + "/cap", "/a/" + style + "/cap");
			}
		}
		offeredForEveryStyle(Scenario.HELD_ANNOTATED_CALL);
		offeredForEveryStyle(Scenario.CANCELLATION);
	}

	// The scenarios' steps

	/** Two calls allowed with their fields, the third refused with the contract's 429; another caller unaffected. */
	private void contract(String path, String policy) {
		String user = caller();
		for (int remaining = 1; remaining >= 0; remaining--) {
			Answer allowed = http().get(path, "X-User-Id", user);
			assertThat(allowed.status()).as(path).isEqualTo(200);
			assertThat(allowed.rateLimitPolicy()).as(path).isEqualTo("\"" + policy + "\";q=2;w=7200");
			assertThat(allowed.rateLimit()).as(path).startsWith("\"" + policy + "\";r=" + remaining + ";t=");
		}
		Answer refused = http().get(path, "X-User-Id", user);
		assertThat(refused.status()).as(path).isEqualTo(429);
		assertThat(refused.retryAfter()).as(path).isEqualTo("3600");
		assertThat(refused.rateLimit()).as(path).startsWith("\"" + policy + "\";r=0;t=");
		assertQuotaExceeded(refused, path, policy);
		assertThat(http().get(path, "X-User-Id", caller()).status()).as(path).isEqualTo(200);
	}

	/** A limit the caller may not see: no fields, and a 503 that names nothing. */
	private void hidden(String path) {
		String user = caller();
		Answer allowed = http().get(path, "X-User-Id", user);
		assertThat(allowed.status()).as(path).isEqualTo(200);
		assertThat(allowed.rateLimit()).as(path).isNull();
		assertThat(allowed.rateLimitPolicy()).as(path).isNull();
		Answer refused = http().get(path, "X-User-Id", user);
		assertThat(refused.status()).as(path).isEqualTo(503);
		assertThat(refused.retryAfter()).as(path).isEqualTo("3600");
		assertThat(refused.header("Cache-Control")).as(path).isEqualTo("no-store");
		assertThat(refused.contentType()).as(path).isEqualTo("application/problem+json");
		JsonNode problem = body(refused);
		assertThat(problem.path("type").asString()).as(path).isEqualTo(REDUCED_CAPACITY);
		assertThat(problem.path("status").asInt()).as(path).isEqualTo(503);
		assertThat(problem.path("instance").asString()).as(path).isEqualTo(path);
		assertThat(problem.has("violated-policies")).as(path).isFalse();
	}

	/** No key where the policy rejects a missing one: 400, not a 500; with the key, allowed. */
	private void missingKey(String path) {
		Answer refused = http().get(path);
		assertThat(refused.status()).as(path).isEqualTo(400);
		assertThat(refused.contentType()).as(path).isEqualTo("application/problem+json");
		assertThat(body(refused).path("type").asString()).as(path).isEqualTo("about:blank");
		assertThat(refused.retryAfter()).as(path).isNull();
		assertThat(http().get(path, "X-User-Id", caller()).status()).as(path).isEqualTo(200);
	}

	/** The contract's 429: fields, caching, and the problem naming the policy. */
	private static void assertQuotaExceeded(Answer refused, String path, String policy) {
		assertThat(refused.header("Cache-Control")).as(path).isEqualTo("no-store");
		assertThat(refused.contentType()).as(path).isEqualTo("application/problem+json");
		JsonNode problem = body(refused);
		assertThat(problem.path("type").asString()).as(path).isEqualTo(QUOTA_EXCEEDED);
		assertThat(problem.path("title").asString()).as(path).isEqualTo("Too Many Requests");
		assertThat(problem.path("status").asInt()).as(path).isEqualTo(429);
		assertThat(problem.path("instance").asString()).as(path).isEqualTo(path);
		assertThat(problem.path("violated-policies").toString()).as(path).isEqualTo("[\"" + policy + "\"]");
	}

	/** One call held in flight: a second of the same caller refused, another caller's allowed, then freed. */
	private void heldCallIsCapped(String holdPath, String quickPath, String cap) {
		String user = caller();
		String id = UUID.randomUUID().toString();
		CompletableFuture<Answer> held = http().sendAsync("GET", holdPath + "?id=" + id, "X-User-Id", user);
		HeldCalls.entered(id).orTimeout(10, TimeUnit.SECONDS).join();
		Answer refused = http().get(quickPath, "X-User-Id", user);
		assertThat(refused.status()).as(holdPath).isEqualTo(429);
		assertThat(refused.header("Cache-Control")).as(holdPath).isEqualTo("no-store");
		assertThat(body(refused).path("violated-policies").toString()).as(holdPath).isEqualTo("[\"" + cap + "\"]");
		assertThat(http().get(quickPath, "X-User-Id", caller()).status()).as(holdPath).isEqualTo(200);
		HeldCalls.release(id);
		assertThat(held.orTimeout(10, TimeUnit.SECONDS).join().status()).as(holdPath).isEqualTo(200);
		// The permit comes back once the answer is complete: on WebFlux, just after the client has it.
		eventually(quickPath, user, 200);
	}

	/** A call held in flight whose client goes away: its permit comes back without the call being released. */
	private void cancelledCallFreesItsPermit(String holdPath, String quickPath) {
		String user = caller();
		String id = UUID.randomUUID().toString();
		CompletableFuture<Answer> held = http().sendAsync("GET", holdPath + "?id=" + id, "X-User-Id", user);
		HeldCalls.entered(id).orTimeout(10, TimeUnit.SECONDS).join();
		held.cancel(true);
		try {
			eventually(quickPath, user, 200);
		}
		finally {
			HeldCalls.release(id);
		}
	}

	/**
	 * Calls until a caller gets a status, for what a stack does once an
	 * answer is complete (a give-back, a permit's release): on WebFlux that
	 * is just after the client has read it. A refusal takes nothing, so calling
	 * again changes nothing; an answer that never comes fails after 10 s.
	 */
	private void eventually(String path, String user, int status) {
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(5))
			.untilAsserted(() -> assertThat(http().get(path, "X-User-Id", user).status()).as(path).isEqualTo(status));
	}

	/** A scenario the stack may not offer: aborted with the stack's reason. */
	private void offered(Scenario scenario, @Nullable String style) {
		String why = cannot(scenario, style);
		Assumptions.assumeTrue(why == null, () -> scenario + " is not offered here: " + why);
	}

	/** The stack's handler styles; the scenario aborted, with the stack's reason, when it has none. */
	private List<String> styles() {
		if (handlerStyles().isEmpty()) {
			offered(Scenario.ANNOTATED_HANDLER, null);
		}
		return handlerStyles();
	}

	/** Aborted, with the reason, when no style of the stack offers it. */
	private void offeredForEveryStyle(Scenario scenario) {
		for (String style : handlerStyles()) {
			if (cannot(scenario, style) == null) {
				return;
			}
		}
		offered(scenario, handlerStyles().isEmpty() ? null : handlerStyles().get(0));
	}

	/** A caller of its own: a key no other scenario or stack uses. */
	private static String caller() {
		return "u-" + UUID.randomUUID();
	}

	private static JsonNode body(Answer answer) {
		return answer.json();
	}

}

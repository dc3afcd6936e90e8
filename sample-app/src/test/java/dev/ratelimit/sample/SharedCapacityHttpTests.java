package dev.ratelimit.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.Limits;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static dev.ratelimit.sample.HttpContract.assertReducedCapacity;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /agent/chat} refused by the provider's capacity, which every
 * tenant shares and none is told about: the provider client's rate
 * ({@code provider-rate}), its parallel-request cap ({@code provider}), and
 * the provider's own refusal with a {@code Retry-After} the call cannot wait
 * out, then the pause it leaves. Every one answers alike, as the service's
 * condition and not the tenant's: 503, {@code Retry-After}, a
 * {@code temporary-reduced-capacity} problem naming nothing, while the
 * tenant's own limit is still reported. The provider's rate is shrunk to one
 * call per hour and its cap waits for nothing, so that a test refuses by them
 * without waiting.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.policies.provider-rate.capacity=1", "rate-limit.policies.provider-rate.refill=1/1h",
				"rate-limit.concurrency.provider.max-wait=0" })
@Import(SampleApplicationHttpTests.ManualClock.class)
class SharedCapacityHttpTests {

	private static final String CHAT = "{\"prompt\":\"hi\",\"maxTokens\":10}";

	@LocalServerPort
	int port;

	@Autowired
	ManualTimeSource clock;

	@Autowired
	SimulatedProvider provider;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = TestHttp.on(this.port);
		// The provider's rate full again, and any pause of the provider over.
		this.clock.advance(Duration.ofHours(2));
	}

	@Test
	void theProvidersRateSpentAnswers503() throws Exception {
		assertThat(chat(tenant()).status()).isEqualTo(200);
		Answer refused = chat(tenant());
		// The next unit comes in an hour; a call may wait up to the policy's 2 s max-wait for it.
		assertReducedCapacity(refused, "3598", "/agent/chat");
		// The tenant's own limit is still reported: it counted the call, which reached the handler.
		assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"tenant-chat\";r=9;t=1");
	}

	@Test
	void theProvidersCapFullAnswers503(@Autowired Limits limits, @Autowired LimitRegistry registry)
			throws Exception {
		int permits = registry.concurrency().find("provider").orElseThrow().permits();
		List<Permit> held = new ArrayList<>();
		try {
			// Held as calls in flight through the provider client hold them: the cap's shared permits.
			for (int i = 0; i < permits; i++) {
				held.add(limits.permit("provider", null));
			}
			assertReducedCapacity(chat(tenant()), "1", "/agent/chat");
		}
		finally {
			held.forEach(Permit::release);
		}
		// The refused attempt took its unit of the provider's rate before the cap refused it.
		this.clock.advance(Duration.ofHours(1));
		assertThat(chat(tenant()).status()).isEqualTo(200);
	}

	@Test
	void theProvidersOwnRefusalAndThePauseItLeavesAnswerAlike() throws Exception {
		this.provider.refuseNext(1, Duration.ofSeconds(60));
		// The provider asks for 60 s, past the client's 10 s deadline: its 429 ends the call at once...
		Answer refusedByProvider = chat(tenant());
		assertReducedCapacity(refusedByProvider, "60", "/agent/chat");
		// ...and the next call finds the provider paused, and is refused before it is sent.
		Answer refusedByPause = chat(tenant());
		assertReducedCapacity(refusedByPause, "60", "/agent/chat");
		assertThat(refusedByPause.body()).isEqualTo(refusedByProvider.body());
	}

	private Answer chat(String tenant) throws Exception {
		return this.http.postJson("/agent/chat", CHAT, "X-Tenant-Id", tenant);
	}

	private static String tenant() {
		return "t-" + UUID.randomUUID();
	}

}

package dev.ratelimit.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.test.context.ContextConfiguration;

import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway example of docs/gateways.md, run as it is written: the YAML
 * block is read from the page (its backend's address replaced by the test
 * backend's) and a gateway started with it, with the key resolver the page
 * shows. What the page says each route does, it does, and the start-up report
 * names the routes that apply each policy.
 */
@SpringBootTest(classes = GatewayDocsExampleTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
@ContextConfiguration(initializers = GatewayDocsExampleTests.DocumentedConfiguration.class)
@ExtendWith(OutputCaptureExtension.class)
class GatewayDocsExampleTests {

	/** The marker before the example's YAML block. */
	static final String MARKER = "<!-- gateway example: run by gateway-tests (GatewayDocsExampleTests) -->";

	/** The marker before the key resolver's Java block. */
	static final String KEY_RESOLVER_MARKER = "<!-- key resolver: declared by gateway-tests "
			+ "(DocumentedKeyResolver) -->";

	/** The backend's address as the page writes it. */
	static final String DOCUMENTED_BACKEND = "http://localhost:8081";

	@LocalServerPort
	int port;

	@Test
	void theRateLimitFilterLimitsOrdersPerClient() {
		for (int remaining = 4; remaining >= 0; remaining--) {
			Answer allowed = TestHttp.on(this.port).get("/orders/7");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.header(Backend.REACHED)).isEqualTo("reached");
			assertThat(allowed.header("RateLimit-Policy")).isEqualTo("\"per-client\";q=5;w=1");
			assertThat(allowed.header("RateLimit")).isEqualTo("\"per-client\";r=" + remaining + ";t=1");
		}
		Answer refused = TestHttp.on(this.port).get("/orders/7");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.header("Retry-After")).isEqualTo("1");
		assertThat(refused.header("Content-Type")).isEqualTo("application/problem+json");
		assertThat(refused.body()).contains("\"violated-policies\":[\"per-client\"]")
			.contains("\"instance\":\"/orders/7\"");
	}

	@Test
	void theLoginRouteCountsOnlyFailedLogins() {
		for (int i = 0; i < 5; i++) {
			// Successful logins give their unit back: never refused.
			assertThat(TestHttp.on(this.port).get("/login", "X-User", "ann", "X-Password", "secret").status())
				.isEqualTo(200);
		}
		for (int i = 0; i < 3; i++) {
			assertThat(TestHttp.on(this.port).get("/login", "X-User", "ann", "X-Password", "guess").status())
				.isEqualTo(401);
		}
		Answer refused = TestHttp.on(this.port).get("/login", "X-User", "ann", "X-Password", "secret");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.header("Retry-After")).isEqualTo("900");
		assertThat(TestHttp.on(this.port).get("/login", "X-User", "bob", "X-Password", "secret").status())
			.isEqualTo(200);
	}

	@Test
	void requestRateLimiterLimitsReportsPerUser() {
		for (int remaining = 9; remaining >= 0; remaining--) {
			Answer allowed = TestHttp.on(this.port).get("/reports/daily", "X-User", "cid");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.header("RateLimit-Policy")).isEqualTo("\"per-user\";q=10;w=60");
			assertThat(allowed.header("RateLimit")).startsWith("\"per-user\";r=" + remaining + ";t=");
		}
		Answer refused = TestHttp.on(this.port).get("/reports/daily", "X-User", "cid");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.header("Retry-After")).isEqualTo("6");
		assertThat(refused.body()).isEmpty();
		assertThat(TestHttp.on(this.port).get("/reports/daily", "X-User", "dan").status()).isEqualTo(200);
	}

	@Test
	void thePagesKeyResolverIsTheOneTheseTestsDeclare() {
		assertThat(DocsPage.block(KEY_RESOLVER_MARKER, "java"))
			.isEqualTo(DocsPage.region(DocumentedKeyResolver.class, "key resolver"));
	}

	@Test
	void theStartUpReportNamesTheRoutesThatApplyEachPolicy(CapturedOutput output) {
		assertThat(output.getAll()).containsPattern("Rate limit policy 'per-client' \\(.*\\) applies to gateway route "
				+ "'orders' \\(RateLimit\\)")
			.containsPattern("Rate limit policy 'logins' \\(.*\\) applies to gateway route 'login' \\(RateLimit\\)")
			.containsPattern("Rate limit policy 'per-user' \\(token-bucket 10, refill 10/1m, key by the KeyResolver "
					+ "'userKeyResolver' of gateway route 'reports', .*\\) applies to gateway route 'reports' "
					+ "\\(RequestRateLimiter\\)")
			.doesNotContain("applies nowhere");
	}

	/** Puts the page's YAML first among the application's properties. */
	static class DocumentedConfiguration implements ApplicationContextInitializer<ConfigurableApplicationContext> {

		@Override
		public void initialize(ConfigurableApplicationContext context) {
			String yaml = documentedYaml().replace(DOCUMENTED_BACKEND, Backend.shared().uri());
			try {
				for (PropertySource<?> source : new YamlPropertySourceLoader().load("docs/gateways.md",
						new ByteArrayResource(yaml.getBytes()))) {
					context.getEnvironment().getPropertySources().addFirst(source);
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		static String documentedYaml() {
			return DocsPage.block(MARKER, "yaml");
		}

	}

	/** A gateway with the page's key resolver. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(DocumentedKeyResolver.class)
	static class App {

		/** The clock stands still: the numbers the test reads are exact however slowly it runs. */
		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}

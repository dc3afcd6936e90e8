package dev.ratelimit.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.test.context.ContextConfiguration;

import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The Java DSL example of docs/gateways.md: the routes of the YAML example
 * built with {@code RouteLocatorBuilder}, with the page's policies (read from
 * its YAML block) and its key resolver. The page's Java block is the bean
 * below, between the markers, the backend's address aside; the routes answer
 * as the page says the YAML routes do.
 */
@SpringBootTest(classes = GatewayJavaDslDocsExampleTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
@ContextConfiguration(initializers = GatewayJavaDslDocsExampleTests.DocumentedPolicies.class)
@ExtendWith(OutputCaptureExtension.class)
class GatewayJavaDslDocsExampleTests {

	/** The marker before the example's Java block. */
	static final String MARKER = "<!-- gateway Java DSL example: run by gateway-tests "
			+ "(GatewayJavaDslDocsExampleTests) -->";

	/** The backend the routes proxy to, written {@code "http://localhost:8081"} on the page. */
	static final String BACKEND = Backend.shared().uri();

	@LocalServerPort
	int port;

	@Test
	void thePagesJavaBlockIsTheBeanThisTestRuns() {
		assertThat(DocsPage.region(GatewayJavaDslDocsExampleTests.class, "routes")
			.replace("BACKEND", "\"" + GatewayDocsExampleTests.DOCUMENTED_BACKEND + "\""))
			.isEqualTo(DocsPage.block(MARKER, "java"));
	}

	@Test
	void theRateLimitFilterLimitsOrdersPerClient() {
		for (int remaining = 4; remaining >= 0; remaining--) {
			Answer allowed = TestHttp.on(this.port).get("/orders/7");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.header(Backend.REACHED)).isEqualTo("reached");
			assertThat(allowed.header("RateLimit")).isEqualTo("\"per-client\";r=" + remaining + ";t=1");
		}
		Answer refused = TestHttp.on(this.port).get("/orders/7");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.header("Content-Type")).isEqualTo("application/problem+json");
		assertThat(refused.body()).contains("\"violated-policies\":[\"per-client\"]");
	}

	@Test
	void theLoginRouteCountsOnlyFailedLogins() {
		for (int i = 0; i < 5; i++) {
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
		assertThat(TestHttp.on(this.port).get("/reports/daily", "X-User", "dan").status()).isEqualTo(200);
	}

	@Test
	void theGatewaysDefaultKeyResolverStaysInPlace(CapturedOutput output) {
		assertThat(output.getAll()).doesNotContain("is the default key resolver of RequestRateLimiter");
	}

	@Test
	void aJavaDslRouteNamingAnUnknownPolicyFailsTheStart() {
		assertThat(startFailure(UnknownPolicyInRateLimit.class))
			.hasMessageStartingWith("Property filter RateLimit.policies with value 'per-tenant' is invalid: no policy "
					+ "named 'per-tenant' is configured");
		assertThat(startFailure(UnknownPolicyInRequestRateLimiter.class))
			.hasMessageStartingWith("Property route 'reports' filter RequestRateLimiter.rate-limit.policies with value "
					+ "'per-tenant' is invalid: no policy named 'per-tenant' is configured");
	}

	private static Throwable startFailure(Class<?> routes) {
		Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(Gateway.class, routes)
			.web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "rate-limit.policies.per-user.capacity=10",
					"rate-limit.policies.per-user.refill=10/1m")
			.run()
			.close());
		assertThat(failure).isNotNull();
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(failure);
		assertThat(cause).isInstanceOf(RateLimitConfigurationException.class);
		return cause;
	}

	/** The policies of the page's YAML example, without its routes: those are the Java DSL's here. */
	static class DocumentedPolicies implements ApplicationContextInitializer<ConfigurableApplicationContext> {

		@Override
		public void initialize(ConfigurableApplicationContext context) {
			String yaml = GatewayDocsExampleTests.DocumentedConfiguration.documentedYaml();
			try {
				for (PropertySource<?> source : new YamlPropertySourceLoader().load("docs/gateways.md",
						new ByteArrayResource(yaml.getBytes()))) {
					Map<String, Object> policies = new LinkedHashMap<>();
					for (String name : ((EnumerablePropertySource<?>) source).getPropertyNames()) {
						if (name.startsWith("rate-limit.")) {
							policies.put(name, source.getProperty(name));
						}
					}
					context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("policies", policies));
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

	/** A gateway without routes of its own. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ DocumentedKeyResolver.class, OwnEventLoops.class })
	static class Gateway {

		/** The clock stands still: the numbers the test reads are exact however slowly it runs. */
		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

	/** The gateway, with the page's routes. */
	@SpringBootConfiguration
	@Import(Gateway.class)
	static class App {

		// docs: routes
		@Bean
		RouteLocator routes(RouteLocatorBuilder builder, RateLimitGatewayFilterFactory rateLimit,
				RateLimitGatewayLimiter rateLimitGatewayLimiter,
				@Qualifier("userKeyResolver") KeyResolver userKeyResolver) {
			return builder.routes()
				.route("orders", (r) -> r.path("/orders/**")
					.filters((f) -> f.filter(rateLimit.apply((c) -> c.setPolicies(List.of("per-client")))))
					.uri(BACKEND))
				.route("login", (r) -> r.path("/login")
					.filters((f) -> f.filter(rateLimit.apply((c) -> {
						c.setPolicies(List.of("logins"));
						c.setCountOn(List.of(401));
					})))
					.uri(BACKEND))
				.route("reports", (r) -> r.path("/reports/**")
					.filters((f) -> f.requestRateLimiter()
						.rateLimiter(RateLimitGatewayLimiter.class, (c) -> c.setPolicies(List.of("per-user")))
						.configure((c) -> c.setRateLimiter(rateLimitGatewayLimiter).setKeyResolver(userKeyResolver)))
					.uri(BACKEND))
				.build();
		}
		// docs: end

	}

	static class UnknownPolicyInRateLimit {

		@Bean
		RouteLocator routes(RouteLocatorBuilder builder, RateLimitGatewayFilterFactory rateLimit) {
			return builder.routes()
				.route("orders", (r) -> r.path("/orders/**")
					.filters((f) -> f.filter(rateLimit.apply((c) -> c.setPolicies(List.of("per-tenant")))))
					.uri(BACKEND))
				.build();
		}

	}

	static class UnknownPolicyInRequestRateLimiter {

		@Bean
		RouteLocator routes(RouteLocatorBuilder builder, RateLimitGatewayLimiter rateLimitGatewayLimiter) {
			return builder.routes()
				.route("reports", (r) -> r.path("/reports/**")
					.filters((f) -> f.requestRateLimiter()
						.rateLimiter(RateLimitGatewayLimiter.class, (c) -> c.setPolicies(List.of("per-tenant")))
						.configure((c) -> c.setRateLimiter(rateLimitGatewayLimiter)))
					.uri(BACKEND))
				.build();
		}

	}

}

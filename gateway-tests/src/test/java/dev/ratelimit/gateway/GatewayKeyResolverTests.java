package dev.ratelimit.gateway;

import java.security.Principal;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.server.WebFilter;

import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway whose own {@code RequestRateLimiter} routes rely on the gateway's
 * default key resolver ({@code principalNameKeyResolver}, the authenticated
 * user's name) keeps its answers when the starter is added as
 * docs/gateways.md says: the application's key resolver, declared as the page
 * declares it, keys only the routes that name it. Declared as a plain
 * {@code KeyResolver} bean, it takes the place of the gateway's default on
 * every route that names none, and the start-up report names those routes.
 */
@ExtendWith(OutputCaptureExtension.class)
class GatewayKeyResolverTests {

	/** The service behind the gateways, on event loops of its own as theirs are. */
	private static final DisposableServer SERVICE = HttpServer.create()
		.host("127.0.0.1")
		.port(0)
		.runOn(LoopResources.create("key-resolver-tests-service", 1, true))
		.handle((request, response) -> response.sendString(Mono.just("served")))
		.bindNow();

	private static final String SERVICE_URI = "http://127.0.0.1:" + SERVICE.port();

	private static final String ROUTE = "spring.cloud.gateway.server.webflux.routes[0].";

	private static final String LEGACY = "spring.cloud.gateway.server.webflux.routes[1].";

	private static final String REPORTS = "spring.cloud.gateway.server.webflux.routes[2].";

	@Test
	void theGatewaysOwnRouteIsKeyedByThePrincipalWithoutAKeyResolverOfTheApplication() {
		try (ConfigurableApplicationContext gateway = gateway(App.class)) {
			assertThat(statuses(gateway, 3, "/limited/1", "X-Login", "alice")).containsExactly(200, 200, 429);
			assertThat(statuses(gateway, 3, "/limited/1", "X-Login", "bob")).containsExactly(200, 200, 429);
			// No principal, no key: the gateway's deny-empty-key.
			assertThat(statuses(gateway, 1, "/limited/1")).containsExactly(403);
		}
	}

	@Test
	void aPlainKeyResolverBeanReKeysTheGatewaysOwnRouteAndTheStartUpReportNamesIt(CapturedOutput output) {
		try (ConfigurableApplicationContext gateway = gatewayWithReports(App.class, PlainKeyResolver.class)) {
			// The gateway's principalNameKeyResolver is gone: the same user, now without a key.
			assertThat(statuses(gateway, 2, "/limited/1", "X-Login", "alice")).containsExactly(403, 403);
		}
		assertThat(output.getAll()).contains("WARN")
			.contains("KeyResolver bean 'userKeyResolver' is the default key resolver of RequestRateLimiter in place "
					+ "of the gateway's principalNameKeyResolver (which the gateway creates only without a KeyResolver "
					+ "bean), and keys the routes that name no key-resolver: gateway route 'limited', gateway route "
					+ "'legacy', and every route of the Java DSL that sets none. If that is not meant, declare "
					+ "'userKeyResolver' with @Bean(defaultCandidate = false) and name it on the routes it keys "
					+ "(key-resolver: \"#{@userKeyResolver}\"), so that the gateway's default stays in place");
	}

	@Test
	void theKeyResolverDeclaredAsTheDocsSayKeysOnlyTheRoutesThatNameIt(CapturedOutput output) {
		try (ConfigurableApplicationContext gateway = gatewayWithReports(App.class, DocumentedKeyResolver.class)) {
			assertThat(statuses(gateway, 3, "/limited/1", "X-Login", "alice")).containsExactly(200, 200, 429);
			assertThat(statuses(gateway, 1, "/limited/1")).containsExactly(403);
			// The route that names it is keyed by the header it reads.
			assertThat(statuses(gateway, 3, "/reports/1", "X-User", "cid")).containsExactly(200, 200, 429);
			assertThat(statuses(gateway, 1, "/reports/1", "X-User", "dan")).containsExactly(200);
		}
		assertThat(output.getAll()).doesNotContain("is the default key resolver of RequestRateLimiter");
	}

	@Test
	void theStartUpReportSaysWhichKeyResolverKeysAPolicyOfRequestRateLimiter(CapturedOutput output) {
		try (ConfigurableApplicationContext gateway = gatewayWithReports(App.class, DocumentedKeyResolver.class)) {
			assertThat(output.getAll())
				.containsPattern("Rate limit policy 'per-user' \\(token-bucket 2, refill 2/1m, key by the "
						+ "KeyResolver 'principalNameKeyResolver' of gateway route 'limited', the KeyResolver "
						+ "'userKeyResolver' of gateway route 'reports', failure-mode \\w+\\) applies to gateway route "
						+ "'limited' \\(RequestRateLimiter\\), gateway route 'reports' \\(RequestRateLimiter\\)")
				.doesNotContain("key global");
		}
	}

	@AfterAll
	static void stopService() {
		SERVICE.disposeNow();
	}

	@Test
	void aPolicyAlsoAppliedElsewhereIsReportedWithItsKeyAndTheRoutesKeyResolver(CapturedOutput output) {
		try (ConfigurableApplicationContext gateway = gateway(List.of("rate-limit.routes[0].pattern=/elsewhere/**",
				"rate-limit.routes[0].policies=per-user"), App.class, DocumentedKeyResolver.class)) {
			assertThat(output.getAll()).contains("Rate limit policy 'per-user' (token-bucket 2, refill 2/1m, "
					+ "key global (by the KeyResolver 'principalNameKeyResolver' of gateway route 'limited'), failure-mode");
		}
	}

	/** The statuses of {@code count} requests in a row. */
	private static List<Integer> statuses(ConfigurableApplicationContext gateway, int count, String path,
			String... headers) {
		int port = ((WebServerApplicationContext) gateway).getWebServer().getPort();
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			statuses.add(TestHttp.on(port).get(path, headers).status());
		}
		return statuses;
	}

	/**
	 * A gateway with two routes of its own limited by {@code RequestRateLimiter}
	 * without a key resolver (the gateway's default, the principal's name):
	 * {@code limited} with the starter's limiter, {@code legacy} with the
	 * gateway's default one.
	 */
	private static ConfigurableApplicationContext gateway(Class<?>... sources) {
		return gateway(List.of(), sources);
	}

	/** The gateway, and a route {@code reports} that names the application's key resolver. */
	private static ConfigurableApplicationContext gatewayWithReports(Class<?>... sources) {
		return gateway(List.of(REPORTS + "id=reports", REPORTS + "uri=" + SERVICE_URI,
				REPORTS + "predicates[0]=Path=/reports/**", REPORTS + "filters[0].name=RequestRateLimiter",
				REPORTS + "filters[0].args.rate-limiter=#{@rateLimitGatewayLimiter}",
				REPORTS + "filters[0].args.rate-limit.policies=per-user",
				REPORTS + "filters[0].args.key-resolver=#{@userKeyResolver}"), sources);
	}

	private static ConfigurableApplicationContext gateway(List<String> more, Class<?>... sources) {
		return new SpringApplicationBuilder(sources).web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "rate-limit.policies.per-user.capacity=2",
					"rate-limit.policies.per-user.refill=2/1m", ROUTE + "id=limited",
					ROUTE + "uri=" + SERVICE_URI, ROUTE + "predicates[0]=Path=/limited/**",
					ROUTE + "filters[0].name=RequestRateLimiter",
					ROUTE + "filters[0].args.rate-limiter=#{@rateLimitGatewayLimiter}",
					ROUTE + "filters[0].args.rate-limit.policies=per-user", LEGACY + "id=legacy",
					LEGACY + "uri=" + SERVICE_URI, LEGACY + "predicates[0]=Path=/legacy/**",
					LEGACY + "filters[0]=RequestRateLimiter")
			.properties(more.toArray(String[]::new))
			.run();
	}

	/** The gateway: a user is authenticated by the header {@code X-Login}, as a security filter would. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OwnEventLoops.class)
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

		@Bean
		WebFilter login() {
			return (exchange, chain) -> {
				String user = exchange.getRequest().getHeaders().getFirst("X-Login");
				if (user == null) {
					return chain.filter(exchange);
				}
				Principal principal = () -> user;
				return chain.filter(exchange.mutate().principal(Mono.just(principal)).build());
			};
		}

	}

	/** The key resolver as the page told the user to add it before: a plain bean. */
	@Configuration(proxyBeanMethods = false)
	static class PlainKeyResolver {

		@Bean
		KeyResolver userKeyResolver() {
			return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-User"));
		}

	}

}

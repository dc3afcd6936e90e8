package dev.ratelimit.blocking;

import java.util.Map;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.gateway.RateLimitGatewayLimiter;
import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Cloud Gateway on the Redis backend as production wires it (the
 * scripts read the server's {@code TIME}), with BlockHound watching the event
 * loops, Lettuce's synchronous wait for a reply marked as blocking: a
 * decision, or a give-back of a route counted by outcome, taken on an event
 * loop would fail the request, so every answer being the expected 200 or 429
 * shows that none was. Both ways a route applies a policy; the gateway's own
 * {@code RedisRateLimiter}, present with reactive Redis, stays the default
 * of {@code RequestRateLimiter}. Runs in a JVM of its own (the module's
 * {@code blocking} Surefire execution): BlockHound instruments the whole JVM.
 */
@SpringBootTest(classes = RedisGatewayNonBlockingTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.backend=redis",
				// Connected before the first request however busy the machine: the decisions are Redis's.
				"rate-limit.redis.connect-timeout=30s",
				"rate-limit.policies.per-user.capacity=2", "rate-limit.policies.per-user.refill=1/1h",
				"rate-limit.policies.per-user.key=header('X-User')", "rate-limit.policies.per-try.capacity=1",
				"rate-limit.policies.per-try.refill=1/1h", "rate-limit.policies.per-try.key=header('X-User')" })
class RedisGatewayNonBlockingTests {

	static {
		BlockHoundInstalled.ensure();
	}

	static final RedisServerFixture redis = RedisServerFixture.shared();

	/** The service behind the gateway: any path answers 200, {@code /status/<code>} that status. */
	static final DisposableServer backend = HttpServer.create()
		.host("127.0.0.1")
		.port(0)
		.handle((request, response) -> {
			String[] segments = request.path().split("/");
			int status = (segments.length > 1 && segments[0].equals("status")) ? Integer.parseInt(segments[1]) : 200;
			return response.status(status).sendString(Mono.just("backend"));
		})
		.bindNow();

	@LocalServerPort
	int port;

	@Autowired
	ApplicationContext context;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		redis.flushAll();
		redis.register(registry);
		String uri = "http://127.0.0.1:" + backend.port();
		String routes = "spring.cloud.gateway.server.webflux.routes";
		registry.add(routes + "[0].id", () -> "filter");
		registry.add(routes + "[0].uri", () -> uri);
		registry.add(routes + "[0].predicates[0]", () -> "Path=/filter/**");
		registry.add(routes + "[0].filters[0]", () -> "RateLimit=per-user");
		registry.add(routes + "[1].id", () -> "limiter");
		registry.add(routes + "[1].uri", () -> uri);
		registry.add(routes + "[1].predicates[0]", () -> "Path=/limiter/**");
		registry.add(routes + "[1].filters[0].name", () -> "RequestRateLimiter");
		registry.add(routes + "[1].filters[0].args.rate-limiter", () -> "#{@rateLimitGatewayLimiter}");
		registry.add(routes + "[1].filters[0].args.key-resolver", () -> "#{@userKeyResolver}");
		registry.add(routes + "[1].filters[0].args.rate-limit.policies", () -> "per-user");
		// Counted by outcome: a 200 gives its unit back once answered, after the proxied answer ended on a loop.
		registry.add(routes + "[2].id", () -> "by-outcome");
		registry.add(routes + "[2].uri", () -> uri);
		registry.add(routes + "[2].predicates[0]", () -> "Path=/status/**");
		registry.add(routes + "[2].filters[0].name", () -> "RateLimit");
		registry.add(routes + "[2].filters[0].args.policies", () -> "per-try");
		registry.add(routes + "[2].filters[0].args.count-on", () -> "500");
	}

	@Test
	void blockHoundIsWatchingTheEventLoops() {
		// What a blocking decision on a non-blocking thread meets: the tests below would see it as a 500.
		BlockHoundInstalled.assertWatching();
	}

	@Test
	void theRateLimitFilterDecidesOnRedisWithoutBlockingAnEventLoop() {
		assertThat(status("/filter/a", "ann")).isEqualTo(200);
		assertThat(status("/filter/a", "ann")).isEqualTo(200);
		assertThat(status("/filter/a", "ann")).isEqualTo(429);
		assertThat(status("/filter/a", "bob")).isEqualTo(200);
	}

	@Test
	void requestRateLimiterDecidesOnRedisWithoutBlockingAnEventLoop() {
		assertThat(status("/limiter/a", "cid")).isEqualTo(200);
		assertThat(status("/limiter/a", "cid")).isEqualTo(200);
		assertThat(status("/limiter/a", "cid")).isEqualTo(429);
		assertThat(status("/limiter/a", "dan")).isEqualTo(200);
	}

	@Test
	void aRouteCountedByOutcomeGivesBackWithoutBlockingAnEventLoop() {
		// A limit of 1, counted only on 500: every 200 gives its unit back, so none is refused.
		for (int i = 0; i < 3; i++) {
			assertThat(status("/status/200", "eve")).as("call %d", i).isEqualTo(200);
		}
		assertThat(status("/status/500", "eve")).isEqualTo(500);
		assertThat(status("/status/200", "eve")).isEqualTo(429);
	}

	@Test
	void theGatewaysRedisRateLimiterStaysTheDefaultBesideTheStartersLimiter() {
		Map<String, RateLimiter> limiters = this.context.getBeansOfType(RateLimiter.class);
		assertThat(limiters.values()).hasSize(2)
			.hasAtLeastOneElementOfType(RedisRateLimiter.class)
			.hasAtLeastOneElementOfType(RateLimitGatewayLimiter.class);
		assertThat(this.context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultRateLimiter())
			.isInstanceOf(RedisRateLimiter.class);
	}

	private int status(String path, String user) {
		return TestHttp.on(this.port).get(path, "X-User", user).status();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		KeyResolver userKeyResolver() {
			return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-User"));
		}

	}

}

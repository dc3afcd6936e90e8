package dev.ratelimit.web;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.support.TestHttp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What docs/configuration.md says of {@code server.forward-headers-strategy=native}
 * on Tomcat: its {@code RemoteIpValve} rewrites the remote address before any
 * filter runs, reading {@code X-Forwarded-For} from the right over its internal
 * proxies (127.0.0.1 among them by default), so the starter needs no
 * {@code trusted-proxies} of its own.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "server.forward-headers-strategy=native", "rate-limit.policies.per-ip.capacity=2",
				"rate-limit.policies.per-ip.refill=2/1h", "rate-limit.policies.per-ip.key=ip",
				"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-ip",
				"rate-limit.policies.by-principal.capacity=1", "rate-limit.policies.by-principal.refill=1/1h" })
class NativeForwardHeadersTests {

	@LocalServerPort
	int port;

	@Test
	void tomcatsValveNamesTheClientFromTheRight() throws Exception {
		assertThat(get("6.6.6.1, 198.51.100.1")).isEqualTo(200);
		assertThat(get("6.6.6.2, 198.51.100.1")).isEqualTo(200);
		assertThat(get("6.6.6.3, 198.51.100.1")).isEqualTo(429);
		assertThat(get("198.51.100.2, 10.0.0.1")).isEqualTo(200);
	}

	private int get(String forwardedFor) {
		return TestHttp.on(this.port).get("/api/open", "X-Forwarded-For", forwardedFor).status();
	}

}

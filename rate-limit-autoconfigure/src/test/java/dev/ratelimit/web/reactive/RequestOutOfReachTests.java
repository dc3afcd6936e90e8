package dev.ratelimit.web.reactive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.RateLimited;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;
import dev.ratelimit.support.TestHttp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where a key that reads the request meets a method called with no request in
 * reach (in a WebFlux application, a method that returns a plain value and is
 * no handler method), the start-up report says so, naming the method and the
 * limit; handler methods and methods returning {@code Mono} are not named. At
 * run time a key that keeps coming out missing is warned of once, naming the
 * limit and the method, never once per call.
 */
@ExtendWith(OutputCaptureExtension.class)
class RequestOutOfReachTests {

	private static final String[] PROPERTIES = { "rate-limit.policies.runs.capacity=100",
			"rate-limit.policies.runs.refill=1/1h", "rate-limit.policies.runs.key=header('X-User-Id')",
			"server.port=0" };

	@Test
	void theStartupReportNamesAMethodWhoseRequestKeyFindsNoRequest(CapturedOutput output) {
		try (ConfigurableApplicationContext context = start()) {
			String service = Service.class.getName();
			assertThat(output).contains("Method " + service + "#summarize is limited by rate limit policy 'runs' (key "
					+ "header('X-User-Id'), missing-key shared), keyed by the request, but in a WebFlux application, "
					+ "a method that returns neither Mono nor Flux reads the request only when it is a controller's "
					+ "handler method");
			assertThat(output).doesNotContain(Controller.class.getName() + "#plain is limited by")
				.doesNotContain(Controller.class.getName() + "#mono is limited by");
		}
	}

	@Test
	void aKeyThatKeepsComingOutMissingIsWarnedOfOnceNamingTheLimitAndTheMethod(CapturedOutput output) {
		try (ConfigurableApplicationContext context = start()) {
			TestHttp http = TestHttp.of(context);
			for (int i = 0; i < 25; i++) {
				assertThat(http.get("/summary", "X-User-Id", "user-" + i).status()).isEqualTo(200);
			}
			String warning = "The key of rate-limit.policies.runs (header('X-User-Id')) came out missing on each of the first "
					+ "10 calls of method " + Service.class.getName() + "#summarize, which had no web request in "
					+ "reach: missing-key shared (one bucket for every caller without a key) applies";
			assertThat(output.getOut().split(java.util.regex.Pattern.quote(warning), -1)).hasSize(2);
			// The handler method, whose key reads its request, is not warned of.
			for (int i = 0; i < 25; i++) {
				assertThat(http.get("/plain", "X-User-Id", "user-" + i).status()).isEqualTo(200);
			}
			assertThat(output).doesNotContain("calls of method " + Controller.class.getName());
		}
	}

	private static ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.REACTIVE).properties(PROPERTIES).run();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfigurationWithoutSecurity
	static class App {

		@Bean
		Service service() {
			return new Service();
		}

		@Bean
		Controller controller(Service service) {
			return new Controller(service);
		}

	}

	static class Service {

		@RateLimited("runs")
		public String summarize() {
			return "summary";
		}

	}

	@RestController
	static class Controller {

		private final Service service;

		Controller(Service service) {
			this.service = service;
		}

		@RateLimited("runs")
		@GetMapping("/plain")
		public String plain() {
			return "plain";
		}

		@RateLimited("runs")
		@GetMapping("/mono")
		public Mono<String> mono() {
			return Mono.just("mono");
		}

		/** Calls the limited service from the pipeline, where no request is bound to the thread. */
		@GetMapping("/summary")
		public Mono<String> summary() {
			return Mono.fromSupplier(this.service::summarize);
		}

	}

}

package dev.ratelimit.benchmarks;

import java.util.concurrent.TimeUnit;

import jakarta.servlet.FilterChain;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.web.context.servlet.AnnotationConfigServletWebApplicationContext;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockServletContext;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.web.servlet.RateLimitFilter;

/**
 * The route filter alone, as the auto-configuration builds it for the HTTP
 * benchmark's set-up (route rule {@code /api/** -> per-ip}, memory backend,
 * Micrometer on, limits so high that every request is admitted), called with
 * Spring's mock servlet request and response and a chain that does nothing:
 * time and bytes allocated per limited request without a server around it,
 * which {@code -prof gc} measures regardless of the machine's load.
 * {@code mocksOnly} is the same request and response passed straight to the
 * chain: subtract it to get the filter's own share.
 * <p>
 * Run: {@code java -jar benchmarks/target/benchmarks.jar FilterBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FilterBenchmark {

	private static final FilterChain NOTHING = (request, response) -> {
	};

	private ConfigurableApplicationContext context;

	private RateLimitFilter filter;

	/** One servlet context for every request: a mock request makes a new one, with maps and a resource loader, if not given one. */
	private final MockServletContext servletContext = new MockServletContext();

	@Setup(Level.Trial)
	@SuppressWarnings("unchecked")
	public void setUp() throws Exception {
		AnnotationConfigServletWebApplicationContext web = new AnnotationConfigServletWebApplicationContext();
		web.setServletContext(new MockServletContext());
		TestPropertyValues
			.of("rate-limit.backend=memory", "rate-limit.policies.per-ip.capacity=1000000000",
					"rate-limit.policies.per-ip.refill=1000000000/1s", "rate-limit.policies.per-ip.key=ip",
					"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-ip")
			.applyTo(web);
		web.register(Limiter.class);
		web.refresh();
		this.context = web;
		this.filter = ((FilterRegistrationBean<RateLimitFilter>) this.context.getBean("rateLimitFilterRegistration"))
			.getFilter();
		MockHttpServletResponse response = limitedRequest();
		if (response.getHeader("RateLimit-Policy") == null || !response.getHeader("RateLimit-Policy").contains("per-ip")) {
			throw new IllegalStateException("The filter did not decide: " + response.getHeaderNames());
		}
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		if (this.context != null) {
			this.context.close();
		}
	}

	@Benchmark
	public MockHttpServletResponse limitedRequest() throws Exception {
		MockHttpServletRequest request = request();
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request, response, NOTHING);
		return response;
	}

	@Benchmark
	public MockHttpServletResponse mocksOnly() throws Exception {
		MockHttpServletRequest request = request();
		MockHttpServletResponse response = new MockHttpServletResponse();
		NOTHING.doFilter(request, response);
		return response;
	}

	/** The limiter's auto-configuration and a meter registry, as in an application with Actuator. */
	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(RateLimitAutoConfiguration.class)
	static class Limiter {

		@Bean
		MeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	private MockHttpServletRequest request() {
		MockHttpServletRequest request = new MockHttpServletRequest(this.servletContext, "GET", "/api/hello");
		request.setRemoteAddr("127.0.0.1");
		return request;
	}

}

package dev.ratelimit.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.web.ForwardedHeader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code rate-limit.client-ip.*}: the resolver built from it, and start-up errors
 * that name the property.
 */
class ClientIpAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void runWithDefaultsShouldTrustNoProxyAndKeyIpv6ClientsBySlash64() {
		this.contextRunner.run((context) -> {
			ClientIpResolver resolver = context.getBean(ClientIpResolver.class);
			assertThat(resolver.readsHeader()).isFalse();
			assertThat(resolver.header()).isEqualTo(ForwardedHeader.X_FORWARDED_FOR);
			assertThat(resolver.resolve("2001:db8:0:7:a:b:c:d", List.of())).isEqualTo("2001:db8:0:7::");
			assertThat(resolver.resolve("192.0.2.1", List.of("198.51.100.1"))).isEqualTo("192.0.2.1");
		});
	}

	@Test
	void runWithClientIpPropertiesShouldBuildTheResolverFromThem() {
		this.contextRunner
			.withPropertyValues("rate-limit.client-ip.trusted-proxies=10.0.0.0/8,2001:db8:ffff::/48",
					"rate-limit.client-ip.forwarded-header=forwarded", "rate-limit.client-ip.ipv4-prefix-length=24",
					"rate-limit.client-ip.ipv6-prefix-length=56")
			.run((context) -> {
				ClientIpResolver resolver = context.getBean(ClientIpResolver.class);
				assertThat(resolver.header()).isEqualTo(ForwardedHeader.FORWARDED);
				assertThat(resolver.resolve("10.0.0.1", List.of("for=192.0.2.77"))).isEqualTo("192.0.2.0");
				assertThat(resolver.resolve("2001:db8:ffff::1", List.of("for=\"[2001:db8:1:2ff::1]\"")))
					.isEqualTo("2001:db8:1:200::");
			});
	}

	@Test
	void runWithTheFormerTrustedProxiesPropertyShouldStillTrustThem() {
		// A configuration written for the old name must not silently stop trusting its proxies.
		this.contextRunner.withPropertyValues("rate-limit.trusted-proxies=10.0.0.0/8").run((context) -> {
			ClientIpResolver resolver = context.getBean(ClientIpResolver.class);
			assertThat(resolver.resolve("10.0.0.1", List.of("192.0.2.77"))).isEqualTo("192.0.2.77");
		});
	}

	@Test
	void runWithHostNameAsTrustedProxyShouldNameThePropertyAndNotResolveIt() {
		this.contextRunner.withPropertyValues("rate-limit.client-ip.trusted-proxies=10.0.0.0/8,proxy.local")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.client-ip.trusted-proxies[1]")
				.contains("'proxy.local'")
				.contains("host names are not resolved"));
	}

	@Test
	void runWithInvalidTrustedProxyRangeShouldNameTheProperty() {
		this.contextRunner.withPropertyValues("rate-limit.client-ip.trusted-proxies=10.0.0.0/33")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.client-ip.trusted-proxies[0]")
				.contains("outside 0..32"));
	}

	@Test
	void runWithPrefixLengthOutOfRangeShouldNameTheProperty() {
		this.contextRunner.withPropertyValues("rate-limit.client-ip.ipv6-prefix-length=0")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.client-ip.ipv6-prefix-length")
				.contains("between 1 and 128"));
		this.contextRunner.withPropertyValues("rate-limit.client-ip.ipv4-prefix-length=33")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.client-ip.ipv4-prefix-length")
				.contains("between 1 and 32"));
	}

	private static FailureAnalysis analyze(ApplicationContextAssertProvider<?> context) {
		assertThat(context).hasFailed();
		FailureAnalysis analysis = new RateLimitConfigurationFailureAnalyzer().analyze(context.getStartupFailure());
		assertThat(analysis).isNotNull();
		return analysis;
	}

}

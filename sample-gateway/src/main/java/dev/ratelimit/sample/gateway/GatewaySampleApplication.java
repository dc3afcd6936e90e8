package dev.ratelimit.sample.gateway;

import java.net.InetSocketAddress;

import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;

/**
 * The gateway sample: a Spring Cloud Gateway (server WebFlux) in front of
 * another service ({@code sample.gateway.backend-uri}), one route limited per
 * client address by the starter's {@code RateLimit} filter, one route without
 * a limiter, and, with the profile {@code compare}, the same limit by the
 * gateway's own {@code RequestRateLimiter} and {@code RedisRateLimiter} (see
 * {@code application.yml}).
 */
@SpringBootApplication
public class GatewaySampleApplication {

	/**
	 * Starts the gateway.
	 * @param args the command line
	 */
	public static void main(String[] args) {
		SpringApplication.run(GatewaySampleApplication.class, args);
	}

	/**
	 * The key of the gateway's own {@code RequestRateLimiter}: the client
	 * address, as the starter's {@code ip} key (without trusted proxies). No
	 * address, no key: the gateway then refuses (its {@code deny-empty-key}).
	 * Not a default candidate: the routes that use it name it, and the
	 * gateway's default key resolver stays in place for any other.
	 * @return the resolver
	 */
	@Bean(defaultCandidate = false)
	KeyResolver clientIpKeyResolver() {
		return (exchange) -> {
			InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
			return (remote != null && remote.getAddress() != null) ? Mono.just(remote.getAddress().getHostAddress())
					: Mono.empty();
		};
	}

}

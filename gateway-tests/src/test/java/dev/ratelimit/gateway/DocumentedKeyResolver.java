package dev.ratelimit.gateway;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The application's key resolver exactly as docs/gateways.md declares it
 * (GatewayDocsExampleTests compares the page's block with the lines between
 * the markers).
 */
@Configuration(proxyBeanMethods = false)
class DocumentedKeyResolver {

	// docs: key resolver
	@Bean(defaultCandidate = false)
	KeyResolver userKeyResolver() {
		return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-User"));
	}
	// docs: end

}

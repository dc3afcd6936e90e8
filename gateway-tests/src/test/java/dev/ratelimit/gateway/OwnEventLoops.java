package dev.ratelimit.gateway;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * Event loops of a gateway's own. Closing a gateway on Reactor Netty's global
 * event loops (one that fails to start, or one a test closes) shuts them down
 * for the whole JVM: the {@link Backend} and other tests' gateways run on them.
 * A test that closes its gateway imports this.
 */
@Configuration(proxyBeanMethods = false)
public class OwnEventLoops {

	@Bean
	ReactorResourceFactory reactorResourceFactory() {
		ReactorResourceFactory resources = new ReactorResourceFactory();
		resources.setUseGlobalResources(false);
		return resources;
	}

}

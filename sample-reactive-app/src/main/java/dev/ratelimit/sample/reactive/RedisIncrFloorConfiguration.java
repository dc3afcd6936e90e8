package dev.ratelimit.sample.reactive;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import dev.ratelimit.redis.RedisLimiterConnection;

/**
 * A benchmark aid, off by default, the reactive twin of the servlet sample's:
 * with {@code sample.benchmark.redis-incr-floor=true} (and
 * {@code rate-limit.backend=redis}) every request to {@code /api/*} pays one
 * plain {@code INCR} on the limiter's own shared Redis connection, sent with
 * Lettuce's asynchronous API so that no event loop waits for it, and one hop
 * to Reactor's parallel scheduler once Redis has answered, and nothing else. Run with the route rules removed ({@code --rate-limit.routes=}), it is
 * the floor a Redis decision is compared with in the HTTP benchmark: the same
 * app, the same connection and one round trip per request, without the limiter
 * deciding anything.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty("sample.benchmark.redis-incr-floor")
class RedisIncrFloorConfiguration {

	@Bean
	RedisIncrFloorFilter redisIncrFloorFilter(RedisLimiterConnection connection) {
		return new RedisIncrFloorFilter(connection.connectionFactory());
	}

	/**
	 * One {@code INCR} per request on a key per client address, as the
	 * {@code per-ip} route rule would use one key per client; the request goes
	 * on once Redis has answered.
	 */
	static final class RedisIncrFloorFilter implements WebFilter {

		/** Prefix of the counters, apart from the limiter's keys. */
		static final String KEY_PREFIX = "sample:incr-floor:{";

		private final RedisConnectionFactory factory;

		/** The shared connection's commands, found on the first request (the limiter connects at start-up). */
		private volatile RedisClusterAsyncCommands<byte[], byte[]> commands;

		RedisIncrFloorFilter(RedisConnectionFactory factory) {
			this.factory = factory;
		}

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
			if (!exchange.getRequest().getPath().pathWithinApplication().value().startsWith("/api/")) {
				return chain.filter(exchange);
			}
			InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
			String client = (remote != null) ? remote.getAddress().getHostAddress() : "unknown";
			byte[] key = (KEY_PREFIX + client + '}').getBytes(StandardCharsets.UTF_8);
			// The request goes on on Reactor's parallel scheduler, not on Lettuce's event loop where the INCR
			// completes: that one thread reads every reply of the connection, and would otherwise also run every
			// request's handler and write its response. (Going on there, with Reactor Netty 1.3.6, is also how the
			// keep-alive hang of reactor-netty#4347 first showed here.) A client gone before Redis answered
			// leaves the INCR sent: it is the round trip measured.
			return Mono.fromFuture(() -> commands().incr(key).toCompletableFuture(), true)
				.publishOn(Schedulers.parallel())
				.then(Mono.defer(() -> chain.filter(exchange)));
		}

		/**
		 * The commands of the factory's shared native connection: what a Spring
		 * connection wraps, without a wrapper per request. Opening it costs no
		 * round trip: the limiter opened the shared connection while the app
		 * started, and a factory not yet connected fails at once.
		 */
		@SuppressWarnings("unchecked")
		private RedisClusterAsyncCommands<byte[], byte[]> commands() {
			RedisClusterAsyncCommands<byte[], byte[]> found = this.commands;
			if (found == null) {
				try (RedisConnection connection = this.factory.getConnection()) {
					found = (RedisClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection();
				}
				this.commands = found;
			}
			return found;
		}

	}

}

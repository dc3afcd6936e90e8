package dev.ratelimit.sample;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.web.filter.OncePerRequestFilter;

import dev.ratelimit.redis.RedisLimiterConnection;

/**
 * A benchmark aid, off by default: with {@code sample.benchmark.redis-incr-floor=true}
 * (and {@code rate-limit.backend=redis}) every request to {@code /api/*} pays one
 * plain {@code INCR} through the limiter's own Redis connection factory, and
 * nothing else. Run with the route rules removed ({@code --rate-limit.routes=}),
 * it is the floor a Redis decision is compared with in the HTTP benchmark: the
 * same app, the same connection and one round trip per request, without the
 * limiter deciding anything.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty("sample.benchmark.redis-incr-floor")
class RedisIncrFloorConfiguration {

	@Bean
	FilterRegistrationBean<RedisIncrFloorFilter> redisIncrFloorFilter(RedisLimiterConnection connection) {
		FilterRegistrationBean<RedisIncrFloorFilter> registration = new FilterRegistrationBean<>(
				new RedisIncrFloorFilter(new StringRedisTemplate(connection.connectionFactory())));
		registration.addUrlPatterns("/api/*");
		return registration;
	}

	/**
	 * One {@code INCR} per request on a key per client address, as the
	 * {@code per-ip} route rule would use one key per client.
	 */
	static final class RedisIncrFloorFilter extends OncePerRequestFilter {

		/** Prefix of the counters, apart from the limiter's keys. */
		static final String KEY_PREFIX = "sample:incr-floor:{";

		private final StringRedisTemplate redis;

		RedisIncrFloorFilter(StringRedisTemplate redis) {
			this.redis = redis;
		}

		@Override
		protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
				throws ServletException, IOException {
			this.redis.opsForValue().increment(KEY_PREFIX + request.getRemoteAddr() + '}');
			chain.doFilter(request, response);
		}

	}

}

package dev.ratelimit.redis;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;

class LimiterConnectionFactoriesTests {

	@Test
	void limiterGetsItsOwnConnectionToTheSameServerWithItsOwnTimeout() {
		RedisServerFixture redis = RedisServerFixture.shared();
		RedisStandaloneConfiguration server = new RedisStandaloneConfiguration("127.0.0.1", redis.port());
		server.setDatabase(3);
		LettuceConnectionFactory application = new LettuceConnectionFactory(server,
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(60)).clientName("app").build());
		application.afterPropertiesSet();
		application.start();
		try (RedisLimiterConnection limiter = new RedisLimiterConnection(application, Duration.ofMillis(100),
				Duration.ofSeconds(2))) {
			limiter.connect();
			RedisConnectionFactory own = limiter.connectionFactory();
			assertThat(own).isNotSameAs(application).isInstanceOf(LettuceConnectionFactory.class);
			LettuceConnectionFactory lettuce = (LettuceConnectionFactory) own;
			// Lettuce's connect and handshake timeout; each command has the limiter's (LimiterTimeoutSourceTests).
			assertThat(lettuce.getClientConfiguration().getCommandTimeout()).isEqualTo(Duration.ofSeconds(2));
			assertThat(lettuce.getClientConfiguration().getClientOptions()).hasValueSatisfying((options) -> {
				assertThat(options.getTimeoutOptions().getSource()).isInstanceOf(LimiterTimeoutSource.class);
				assertThat(options.getSocketOptions().getConnectTimeout()).isEqualTo(Duration.ofSeconds(2));
				// A call to a disconnected Redis fails at once, for the failure modes to decide.
				assertThat(options.getDisconnectedBehavior())
					.isEqualTo(io.lettuce.core.ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
			});
			// Resources of its own, with the application's threads and the silence watch on every channel.
			assertThat(lettuce.getClientConfiguration().getClientResources()).hasValueSatisfying((resources) -> {
				assertThat(resources).isNotSameAs(application.getClientConfiguration().getClientResources().orElse(null));
				assertThat(resources.nettyCustomizer()).isNotNull();
			});
			assertThat(lettuce.getClientConfiguration().getClientName()).hasValue("app");
			assertThat(lettuce.getPort()).isEqualTo(redis.port());
			assertThat(lettuce.getDatabase()).isEqualTo(3);
			new StringRedisTemplate(own).opsForValue().set("limiter-connection", "works");
			assertThat(new StringRedisTemplate(application).opsForValue().get("limiter-connection")).isEqualTo("works");
		}
		finally {
			application.destroy();
		}
	}

	@Test
	void clusterConfigurationIsKept() {
		LettuceConnectionFactory application = new LettuceConnectionFactory(
				new RedisClusterConfiguration(java.util.List.of("127.0.0.1:7000", "127.0.0.1:7001")));
		RedisConnectionFactory own = LimiterConnectionFactories.forLimiter(application, Duration.ofMillis(500),
				Duration.ofSeconds(1), new RedisSilence(Duration.ofMillis(50)));
		try {
			assertThat(((LettuceConnectionFactory) own).isClusterAware()).isTrue();
			// Spring Data Redis turns them into cluster options, keeping the timeouts.
			assertThat(((LettuceConnectionFactory) own).getClientConfiguration().getClientOptions())
				.hasValueSatisfying((options) -> assertThat(options.getTimeoutOptions().getSource())
					.isInstanceOf(LimiterTimeoutSource.class));
			assertThat(((LettuceConnectionFactory) own).getClusterConfiguration().getClusterNodes()).hasSize(2);
		}
		finally {
			((LettuceConnectionFactory) own).destroy();
		}
	}

}

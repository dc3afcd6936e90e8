package dev.ratelimit.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.event.DefaultEventPublisherOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import org.jspecify.annotations.Nullable;

/**
 * The Lettuce client resources of the limiter's own connection: the
 * application's, with a {@link SilenceWatch} on every channel. Lettuce lets a
 * customizer reach a connection's channels only through the client resources,
 * so the limiter's factory gets resources of its own that share every thread
 * pool, the timer, the resolvers and the latency recorder of the application's
 * (so the limiter starts no thread of its own and its commands are measured
 * with the application's), and differ only in their customizer. Without
 * resources of the application's the limiter's are new ones.
 * <p>
 * They also differ in their reconnect delay: Lettuce's default doubles the
 * pause between attempts up to 30 s, so that a connection lost for a few
 * seconds (a primary killed, then replaced by Sentinel or a Cluster failover)
 * could wait many seconds more before it tried the new one. The limiter's
 * connections try at least every {@link #LONGEST_RECONNECT_DELAY}; each
 * attempt costs a connect (and, with Sentinel, a question to a sentinel).
 * Every channel is also registered in the connection's {@link LimiterChannels}.
 * <p>
 * Shutting the limiter's resources down stops only what they created
 * themselves: Lettuce marks what a builder was given as shared.
 */
final class LimiterClientResources {

	/** The longest pause between two reconnect attempts of the limiter's connections. */
	static final Duration LONGEST_RECONNECT_DELAY = Duration.ofMillis(500);

	private LimiterClientResources() {
	}

	/**
	 * Returns the limiter's resources, to be shut down by the caller.
	 * @param application the application's resources, or {@code null} when it
	 * has none (each of its clients makes its own)
	 * @param silence the gate the watches report to
	 * @param connectTimeout how long Redis may stay silent while it works on a
	 * command only start-up and Lettuce itself send
	 * @param channels registers every channel
	 * @return the resources
	 */
	static ClientResources of(@Nullable ClientResources application, RedisSilence silence, Duration connectTimeout,
			LimiterChannels channels) {
		NettyCustomizer own = (application != null) ? application.nettyCustomizer() : new NettyCustomizer() {
		};
		NettyCustomizer watched = new NettyCustomizer() {

			@Override
			public void afterBootstrapInitialized(io.netty.bootstrap.Bootstrap bootstrap) {
				own.afterBootstrapInitialized(bootstrap);
			}

			@Override
			public void afterChannelInitialized(Channel channel) {
				own.afterChannelInitialized(channel);
				channels.install(channel);
				SilenceWatch.install(channel, silence, connectTimeout);
			}

		};
		return shared(application).reconnectDelay(limiterDelay()).nettyCustomizer(watched).build();
	}

	/**
	 * Returns resources for the limiter's connections that only listen (to the
	 * sentinels' events): the application's threads, with the limiter's reconnect
	 * delay and neither silence watch nor registry, since their silence says
	 * nothing of the limiter's calls. To be shut down by the caller.
	 * @param application the application's resources, or {@code null}
	 * @return the resources
	 */
	static ClientResources forEvents(@Nullable ClientResources application) {
		return shared(application).reconnectDelay(limiterDelay()).build();
	}

	/** Doubles from 1 ms to at most {@link #LONGEST_RECONNECT_DELAY}; a new delay per connection. */
	private static Delay limiterDelay() {
		return Delay.exponential(Duration.ZERO, LONGEST_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS);
	}

	/** A builder sharing every thread pool, timer and resolver of the application's resources, if any. */
	private static ClientResources.Builder shared(@Nullable ClientResources application) {
		if (application == null) {
			return ClientResources.builder();
		}
		return ClientResources.builder()
			.eventLoopGroupProvider(application.eventLoopGroupProvider())
			.eventExecutorGroup(application.eventExecutorGroup())
			.timer(application.timer())
			.commandLatencyRecorder(application.commandLatencyRecorder())
			// The application's resources publish the shared recorder's figures: not twice.
			.commandLatencyPublisherOptions(DefaultEventPublisherOptions.disabled())
			.eventBus(application.eventBus())
			.dnsResolver(application.dnsResolver())
			.socketAddressResolver(application.socketAddressResolver())
			.addressResolverGroup(application.addressResolverGroup())
			.tracing(application.tracing());
	}

}

package dev.ratelimit.redis;

import java.time.Duration;

import io.lettuce.core.event.DefaultEventPublisherOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.NettyCustomizer;

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
 * Shutting the limiter's resources down stops only what they created
 * themselves: Lettuce marks what a builder was given as shared.
 */
final class LimiterClientResources {

	private LimiterClientResources() {
	}

	/**
	 * Returns the limiter's resources, to be shut down by the caller.
	 * @param application the application's resources, or {@code null} when it
	 * has none (each of its clients makes its own)
	 * @param silence the gate the watches report to
	 * @param connectTimeout how long Redis may stay silent while it works on a
	 * command only start-up and Lettuce itself send
	 * @return the resources
	 */
	static ClientResources of(ClientResources application, RedisSilence silence, Duration connectTimeout) {
		if (application == null) {
			return ClientResources.builder()
				.nettyCustomizer(SilenceWatch.customizer(silence, connectTimeout, new NettyCustomizer() {
				}))
				.build();
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
			.reconnectDelay(application::reconnectDelay)
			.tracing(application.tracing())
			.nettyCustomizer(SilenceWatch.customizer(silence, connectTimeout, application.nettyCustomizer()))
			.build();
	}

}

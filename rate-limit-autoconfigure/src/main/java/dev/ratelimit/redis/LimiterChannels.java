package dev.ratelimit.redis;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import org.jspecify.annotations.Nullable;

/**
 * The open channels of the limiter's own connections (every node of a
 * cluster, the connection that waits for replicas), so that the limiter can
 * move off a server that no longer is the primary: closing a channel has
 * Lettuce reconnect it, and a connection to a Sentinel master asks the
 * sentinels where the master is on every reconnect. Nothing else is closed:
 * the connection objects stay, and commands sent while a channel reconnects
 * are refused at once, so that the failure modes decide them.
 * <p>
 * It also tells a channel that the server ended (a killed primary, a lost
 * network) from one this process closed (Lettuce after a topology refresh, the
 * limiter moving to a new master): only the first is a loss.
 */
final class LimiterChannels {

	private final Set<Channel> open = ConcurrentHashMap.newKeySet();

	/** Told of each channel that becomes active, with its remote address: set once, before the first connect. */
	private volatile Consumer<Channel> activated = (channel) -> {
	};

	/** Told of each channel the server ended. */
	private volatile Consumer<Channel> lost = (channel) -> {
	};

	/**
	 * Installs what registers a channel on its pipeline: at its tail, what hears
	 * it become active, once Lettuce's handlers have; at its head, what hears it
	 * end or fail reading, before Lettuce's handlers fail the calls it carried,
	 * so that a call failed by a lost connection finds the loss told of already.
	 * @param channel the channel, just initialized by Lettuce
	 */
	void install(Channel channel) {
		Registration registration = new Registration();
		channel.pipeline().addFirst("rateLimitChannelLost", registration.new Ending());
		channel.pipeline().addLast("rateLimitChannels", registration.new Activation());
	}

	/** One channel's registration. */
	private final class Registration {

		/** Whether this process closed the channel: a close passed through the pipeline. */
		private boolean closedHere;

		/** Whether its loss was told of: a read that failed before the channel ended. */
		private boolean lostTold;

		private void ended(ChannelHandlerContext ctx) {
			// Only a channel that was active ends: one that never connected is a failed attempt.
			if (LimiterChannels.this.open.remove(ctx.channel()) && !this.closedHere && !this.lostTold) {
				this.lostTold = true;
				LimiterChannels.this.lost.accept(ctx.channel());
			}
		}

		/** At the tail of the pipeline: hears the channel become active after Lettuce's handlers. */
		private final class Activation extends ChannelDuplexHandler {

			@Override
			public void channelActive(ChannelHandlerContext ctx) throws Exception {
				LimiterChannels.this.open.add(ctx.channel());
				LimiterChannels.this.activated.accept(ctx.channel());
				ctx.fireChannelActive();
			}

		}

		/** At the head of the pipeline: hears the channel end, or its read fail, before Lettuce's handlers. */
		private final class Ending extends ChannelDuplexHandler {

			@Override
			public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
				Registration.this.closedHere = true;
				ctx.close(promise);
			}

			@Override
			public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
				// A read that failed (connection reset): Netty closes the channel after Lettuce failed its calls.
				if (cause instanceof IOException && LimiterChannels.this.open.contains(ctx.channel())
						&& !Registration.this.closedHere && !Registration.this.lostTold) {
					Registration.this.lostTold = true;
					LimiterChannels.this.lost.accept(ctx.channel());
				}
				ctx.fireExceptionCaught(cause);
			}

			@Override
			public void channelInactive(ChannelHandlerContext ctx) throws Exception {
				ended(ctx);
				ctx.fireChannelInactive();
			}

		}

	}

	/**
	 * Sets what hears each channel that becomes active.
	 * @param listener called on the channel's event loop; must not block
	 */
	void onActive(Consumer<Channel> listener) {
		this.activated = listener;
	}

	/**
	 * Sets what hears each channel that the server ended, not this process.
	 * @param listener called on the channel's event loop; must not block
	 */
	void onLost(Consumer<Channel> listener) {
		this.lost = listener;
	}

	/**
	 * Runs an action on every open channel.
	 * @param action the action
	 */
	void forEachOpen(Consumer<Channel> action) {
		this.open.forEach(action);
	}

	/**
	 * A server's address as Redis and the sentinels report it: an IP address (or
	 * a host name where the sentinels announce names) and a port. Compared with
	 * a channel's remote address without a name lookup.
	 * @param host the host as reported
	 * @param port the port
	 */
	record HostAndPort(String host, int port) {

		/**
		 * Returns whether a channel's remote address is this one: the same port,
		 * and the same IP address or, for a name, the name the channel was opened
		 * with.
		 * @param remote the channel's remote address
		 * @return whether it matches
		 */
		boolean matches(@Nullable SocketAddress remote) {
			if (!(remote instanceof InetSocketAddress inet) || inet.getPort() != this.port) {
				return false;
			}
			if (inet.getAddress() != null && inet.getAddress().getHostAddress().equals(this.host)) {
				return true;
			}
			return this.host.equalsIgnoreCase(inet.getHostString());
		}

		/**
		 * Returns the address of a channel's remote end.
		 * @param remote the remote address
		 * @return the address, or {@code null} when it is not a TCP address
		 */
		static @Nullable HostAndPort of(@Nullable SocketAddress remote) {
			if (!(remote instanceof InetSocketAddress inet)) {
				return null;
			}
			String host = (inet.getAddress() != null) ? inet.getAddress().getHostAddress() : inet.getHostString();
			return new HostAndPort(host, inet.getPort());
		}

		@Override
		public String toString() {
			return this.host + ":" + this.port;
		}

	}

}

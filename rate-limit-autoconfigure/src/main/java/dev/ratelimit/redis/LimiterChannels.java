package dev.ratelimit.redis;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

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
 * limiter moving to a new master): only the first is a loss. A loss is told
 * by whichever hears it first: the channel's end, a read that failed, or a
 * call that Lettuce refused because the channel had closed already (see
 * {@link #closedUnheard}).
 */
final class LimiterChannels {

	/** The active channels, each with its registration. */
	private final Map<Channel, Registration> open = new ConcurrentHashMap<>();

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
		private volatile boolean closedHere;

		/** Whether its loss was told of: by its end, or a read that failed before. */
		private boolean lostTold;

		private void ended(ChannelHandlerContext ctx) {
			// Only a channel that was active ends: one that never connected is a failed attempt.
			if (LimiterChannels.this.open.containsKey(ctx.channel()) && tellLost()) {
				LimiterChannels.this.lost.accept(ctx.channel());
			}
			// Open until its loss was told: a call refused meanwhile finds it closed (see closedUnheard()).
			LimiterChannels.this.open.remove(ctx.channel());
		}

		/** Returns whether the loss is this one's to tell: the server ended the channel, and no one told yet. */
		private synchronized boolean tellLost() {
			if (this.closedHere || this.lostTold) {
				return false;
			}
			this.lostTold = true;
			return true;
		}

		/** At the tail of the pipeline: hears the channel become active after Lettuce's handlers. */
		private final class Activation extends ChannelDuplexHandler {

			@Override
			public void channelActive(ChannelHandlerContext ctx) throws Exception {
				LimiterChannels.this.open.put(ctx.channel(), Registration.this);
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
				if (cause instanceof IOException && LimiterChannels.this.open.containsKey(ctx.channel())
						&& tellLost()) {
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
		this.open.keySet().forEach(action);
	}

	/**
	 * Returns a channel that closed without this process closing it, whose
	 * loss has not been told through {@link #onLost} yet. Netty marks a channel
	 * inactive as it closes it and runs the handlers' {@code channelInactive}
	 * later, as a task of its event loop behind those queued before; a call sent
	 * meanwhile is refused at once ("not connected") by Lettuce, which reads the
	 * channel's state. Such a refusal is the loss, found first by the call. The
	 * channel stays here until its loss listener has returned, so that a call
	 * refused while the listener runs finds it too.
	 * @param counts which channels count (not the sentinels')
	 * @return such a channel; {@code null} when every open one that counts is
	 * active or was closed by this process
	 */
	@Nullable Channel closedUnheard(Predicate<Channel> counts) {
		for (Map.Entry<Channel, Registration> entry : this.open.entrySet()) {
			Channel channel = entry.getKey();
			if (!channel.isActive() && !entry.getValue().closedHere && counts.test(channel)) {
				return channel;
			}
		}
		return null;
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

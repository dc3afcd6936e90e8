package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.protocol.RedisCommand;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.AbstractScheduledEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import org.jspecify.annotations.Nullable;

/**
 * Fails the limiter's calls when Redis has sent nothing for the limiter's
 * timeout while they waited, and only then: measured on the thread that reads
 * Redis's replies, after it has read what arrived.
 * <p>
 * Why not a timer per call, started when the call is made: on a busy machine
 * (every core taken by request threads, a JIT compiler, a garbage collector,
 * or other processes) a thread that becomes runnable can wait tens of
 * milliseconds, now and then over a hundred, before it runs. A call needs three
 * such threads in a row: Lettuce's event loop to write the command, Redis to
 * run it, and the event loop again to read the reply. Measured on two cores
 * under load (kernel scheduler trace, see benchmarks/NOTEBOOK.md), each of them
 * waited over 50 ms now and then, so a call timer of 100 ms fired while Redis
 * had answered long before: the reply sat in the socket, unread. A busy
 * application looked like a Redis outage, and each such call fell to its
 * failure mode.
 * <p>
 * So the check runs on the event loop that owns the connection, and Netty runs
 * an event loop's scheduled tasks after each pass over its sockets: when the
 * check runs, what Redis sent has been read. A late event loop delays the check
 * as much as the reading, so its own lateness never counts. The check fails the
 * waiting calls only when nothing at all has arrived from Redis for the
 * timeout while they waited, and looks once more after one more pass over the
 * sockets before it does. A Redis that answers slowly, because it is busy or
 * starved of CPU itself, keeps sending replies and is not silent; a frozen
 * one ({@code SIGSTOP}), one stuck in a long script, or a dead network is.
 * <p>
 * Commands only the connector and Lettuce itself send (script and function
 * loads, topology) may take longer: while one of them is the oldest command
 * waiting, the one Redis works on, Redis may stay silent for the connect
 * timeout instead. Installed on every channel of the limiter's connection (every node of a
 * cluster) by {@link LimiterClientResources}; one instance per channel, only ever
 * touched on that channel's event loop.
 */
final class SilenceWatch {

	private final long timeoutNanos;

	private final long connectTimeoutNanos;

	private final RedisSilence silence;

	/** The commands written and not yet seen done, oldest first. */
	private final ArrayDeque<RedisCommand<?, ?, ?>> waiting = new ArrayDeque<>();

	/** When the last bytes arrived from Redis. */
	private long heardAtNanos;

	/** When {@link #waiting} last stopped being empty. */
	private long waitingSinceNanos;

	private @Nullable ScheduledFuture<?> check;

	/** Whether the check found the calls overdue once and looks again after one more pass. */
	private boolean confirming;

	/** The channel's event loop, set when the watch joins the pipeline. */
	private @Nullable EventExecutor executor;

	/** The channel, set when the watch joins the pipeline: its remote end is the node a Cluster's silence names. */
	private @Nullable Channel channel;

	/** The event loop's clock, the one its scheduled tasks run by. */
	private Ticker ticker = Ticker.systemTicker();

	private SilenceWatch(RedisSilence silence, Duration connectTimeout) {
		this.timeoutNanos = silence.timeout().toNanos();
		this.connectTimeoutNanos = connectTimeout.toNanos();
		this.silence = silence;
	}

	/**
	 * Installs a watch on a channel of the limiter's connection.
	 * @param channel the channel, just initialized by Lettuce
	 * @param silence the gate the watch reports to
	 * @param connectTimeout how long Redis may stay silent while it works on a
	 * command only start-up and Lettuce itself send
	 */
	static void install(Channel channel, RedisSilence silence, Duration connectTimeout) {
		SilenceWatch watch = new SilenceWatch(silence, connectTimeout);
		// First: it sees every byte that arrives, before any decoding.
		channel.pipeline().addFirst("rateLimitHeard", watch.new Heard());
		// Last: it sees each command as it is written, before Lettuce's handler stacks it.
		channel.pipeline().addLast("rateLimitSilence", watch.new Watch());
	}

	private void written(Object message) {
		if (message instanceof RedisCommand<?, ?, ?> command) {
			watch(command);
		}
		else if (message instanceof Collection<?> commands) {
			for (Object each : commands) {
				if (each instanceof RedisCommand<?, ?, ?> command) {
					watch(command);
				}
			}
		}
	}

	private void watch(RedisCommand<?, ?, ?> command) {
		dropDone();
		if (this.waiting.isEmpty()) {
			this.waitingSinceNanos = this.ticker.nanoTime();
		}
		this.waiting.add(command);
		if (this.check == null) {
			schedule(this.timeoutNanos);
		}
	}

	private void schedule(long delayNanos) {
		this.check = executor().schedule(this::check, delayNanos, TimeUnit.NANOSECONDS);
	}

	private void added(ChannelHandlerContext ctx) {
		this.channel = ctx.channel();
		this.executor = ctx.executor();
		if (this.executor instanceof AbstractScheduledEventExecutor scheduled) {
			this.ticker = scheduled.ticker();
		}
		this.heardAtNanos = this.ticker.nanoTime();
	}

	/** Runs on the event loop, after a pass over its sockets. */
	private void check() {
		this.check = null;
		dropDone();
		if (this.waiting.isEmpty()) {
			this.confirming = false;
			return;
		}
		long silentSince = Math.max(this.heardAtNanos, this.waitingSinceNanos);
		long allowed = LimiterTimeoutSource.isConnectTime(this.waiting.peekFirst().getType())
				? this.connectTimeoutNanos : this.timeoutNanos;
		long overdue = this.ticker.nanoTime() - silentSince - allowed;
		if (overdue < 0) {
			this.confirming = false;
			schedule(-overdue);
			return;
		}
		if (!this.confirming) {
			// Once more after the next pass over the sockets: this check may run just before a reply is read.
			this.confirming = true;
			schedule(0);
			return;
		}
		this.confirming = false;
		long silentMillis = TimeUnit.NANOSECONDS.toMillis(this.ticker.nanoTime() - silentSince);
		String why = "nothing received for " + silentMillis + " ms while " + this.waiting.size()
				+ " command(s) waited (rate-limit.redis.timeout " + TimeUnit.NANOSECONDS.toMillis(this.timeoutNanos)
				+ " ms)";
		RedisCommandTimeoutException failure = new RedisCommandTimeoutException(
				"Redis sent nothing for " + silentMillis + " ms");
		// The gate closes first: a caller woken by its failed command finds the silence told of already.
		this.silence.fellSilent(channel().remoteAddress(), why);
		for (RedisCommand<?, ?, ?> command : this.waiting) {
			command.completeExceptionally(failure);
		}
		this.waiting.clear();
	}

	private void dropDone() {
		while (!this.waiting.isEmpty() && this.waiting.peekFirst().isDone()) {
			this.waiting.pollFirst();
		}
	}

	private void heard() {
		this.heardAtNanos = this.ticker.nanoTime();
		this.silence.heard(channel().remoteAddress());
	}

	/** The channel's event loop: the watch schedules and hears only once it joined the pipeline. */
	private EventExecutor executor() {
		return Objects.requireNonNull(this.executor, "joined the pipeline");
	}

	/** The channel: the watch hears of calls only once it joined the pipeline. */
	private Channel channel() {
		return Objects.requireNonNull(this.channel, "joined the pipeline");
	}

	private void closed() {
		if (this.check != null) {
			this.check.cancel(false);
			this.check = null;
		}
		// Lettuce retries or cancels what the channel held; a new channel gets a new watch.
		this.waiting.clear();
	}

	/** At the head of the pipeline: notes every read. */
	private final class Heard extends ChannelInboundHandlerAdapter {

		@Override
		public void channelRead(ChannelHandlerContext ctx, Object message) throws Exception {
			heard();
			ctx.fireChannelRead(message);
		}

	}

	/** At the tail of the pipeline: notes every command written, and the channel's end. */
	private final class Watch extends ChannelDuplexHandler {

		@Override
		public void handlerAdded(ChannelHandlerContext ctx) {
			added(ctx);
		}

		@Override
		public void write(ChannelHandlerContext ctx, Object message, ChannelPromise promise) throws Exception {
			written(message);
			ctx.write(message, promise);
		}

		@Override
		public void channelInactive(ChannelHandlerContext ctx) throws Exception {
			closed();
			ctx.fireChannelInactive();
		}

	}

}

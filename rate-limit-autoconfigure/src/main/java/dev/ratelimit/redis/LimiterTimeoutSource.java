package dev.ratelimit.redis;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.protocol.RedisCommand;

/**
 * The longest wait of each command on the limiter's Lettuce connection. Spring
 * Data Redis gives Lettuce one duration, the {@code RedisURI} timeout, and
 * Lettuce uses it both for commands and for opening a connection (DNS, TCP, TLS
 * and the HELLO/AUTH/SELECT/CLIENT SETNAME handshake, all under one timer
 * started when the channel registers). The limiter needs two: a connect that
 * may take a while on a busy machine, and calls that never wait longer than
 * {@code rate-limit.redis.busy-timeout} in all. So the URI timeout is the
 * connect timeout, and this source, set as {@link TimeoutOptions}, bounds every
 * command by the busy timeout, except the few that only start-up and Lettuce's
 * own topology and failover look-ups send, which get the connect timeout.
 * <p>
 * This is the last resort, on a timer that counts from the call: whether Redis
 * answers at all is told much sooner, by {@link SilenceWatch}, on the thread
 * that reads the replies.
 */
final class LimiterTimeoutSource extends TimeoutOptions.TimeoutSource {

	/**
	 * Sent by the connector (SCRIPT LOAD, FUNCTION LOAD) or by Lettuce itself
	 * (the handshake of each connection, Cluster topology, Sentinel), never per
	 * decision; and WAIT, which Redis holds on purpose until the replicas answer
	 * or its own timeout passes (see {@link ReplicaAcks}), on a connection of
	 * its own.
	 */
	private static final Set<CommandType> CONNECT_TIME = EnumSet.of(CommandType.SCRIPT, CommandType.FUNCTION,
			CommandType.CLUSTER, CommandType.INFO, CommandType.SENTINEL, CommandType.HELLO, CommandType.AUTH,
			CommandType.SELECT, CommandType.CLIENT, CommandType.READONLY, CommandType.WAIT);

	private final long commandNanos;

	private final long connectNanos;

	LimiterTimeoutSource(Duration busyTimeout, Duration connectTimeout) {
		this.commandNanos = busyTimeout.toNanos();
		this.connectNanos = connectTimeout.toNanos();
	}

	/**
	 * Returns whether only start-up and Lettuce itself send a command of this type:
	 * it waits the connect timeout and is not watched for silence.
	 * @param type the command's type
	 * @return whether it is a connect-time command
	 */
	static boolean isConnectTime(ProtocolKeyword type) {
		return type instanceof CommandType known && CONNECT_TIME.contains(known);
	}

	@Override
	public long getTimeout(RedisCommand<?, ?, ?> command) {
		// Lettuce documents a null command for a timeout asked before a connect finished.
		if (command == null) {
			return this.connectNanos;
		}
		return isConnectTime(command.getType()) ? this.connectNanos : this.commandNanos;
	}

	@Override
	public TimeUnit getTimeUnit() {
		return TimeUnit.NANOSECONDS;
	}

}

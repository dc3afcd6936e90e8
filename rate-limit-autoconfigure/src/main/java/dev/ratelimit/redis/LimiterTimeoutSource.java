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
 * The timeout of each command on the limiter's Lettuce connection. Spring Data
 * Redis gives Lettuce one duration, the {@code RedisURI} timeout, and Lettuce
 * uses it both for commands and for opening a connection (DNS, TCP, TLS and
 * the HELLO/AUTH/SELECT/CLIENT SETNAME handshake, all under one timer started
 * when the channel registers). The limiter needs two: a connect that may take
 * a while on a busy machine, and commands that never hold a request longer than
 * {@code rate-limit.redis.timeout}. So the URI timeout is the connect timeout,
 * and this source, set as {@link TimeoutOptions}, bounds every command by the
 * limiter's timeout, except the few that only start-up and Lettuce's own
 * topology and failover look-ups send, which get the connect timeout.
 */
final class LimiterTimeoutSource extends TimeoutOptions.TimeoutSource {

	/**
	 * Sent by the connector (SCRIPT LOAD, FUNCTION LOAD) or by Lettuce itself
	 * (Cluster topology, Sentinel), never per decision.
	 */
	private static final Set<CommandType> CONNECT_TIME = EnumSet.of(CommandType.SCRIPT, CommandType.FUNCTION,
			CommandType.CLUSTER, CommandType.INFO, CommandType.SENTINEL);

	private final long commandNanos;

	private final long connectNanos;

	LimiterTimeoutSource(Duration commandTimeout, Duration connectTimeout) {
		this.commandNanos = commandTimeout.toNanos();
		this.connectNanos = connectTimeout.toNanos();
	}

	@Override
	public long getTimeout(RedisCommand<?, ?, ?> command) {
		// Lettuce documents a null command for a timeout asked before a connect finished.
		if (command == null) {
			return this.connectNanos;
		}
		ProtocolKeyword type = command.getType();
		return (type instanceof CommandType known && CONNECT_TIME.contains(known)) ? this.connectNanos
				: this.commandNanos;
	}

	@Override
	public TimeUnit getTimeUnit() {
		return TimeUnit.NANOSECONDS;
	}

}

package dev.ratelimit.redis;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Reads Redis error replies out of a client's failure, whatever the client:
 * Lettuce's {@code RedisCommandExecutionException} and Jedis'
 * {@code JedisDataException} carry the reply as their message, and Spring Data
 * Redis wraps them ({@code Error in execution}). Tells the replies of a server
 * that cannot serve now (loading, busy, a cluster or replica not ready) from
 * those that refuse the command for good ({@code NOPERM}, an unknown command).
 */
final class ErrorReplies {

	/** Error replies of a server that cannot serve now, whatever the command: never a refusal. */
	private static final List<String> PASSING = List.of("LOADING", "OOM", "BUSY", "CLUSTERDOWN", "READONLY",
			"MASTERDOWN", "TRYAGAIN", "NOREPLICAS", "MOVED", "ASK");

	/** The clients' exceptions whose message is the server's error reply. */
	private static final List<String> REPLY_TYPES = List.of("io.lettuce.core.RedisCommandExecutionException",
			"redis.clients.jedis.exceptions.JedisDataException");

	private ErrorReplies() {
	}

	/**
	 * Returns whether an error reply says the server cannot serve right now
	 * rather than that it refuses the command.
	 * @param reply the error reply
	 * @return whether it passes
	 */
	static boolean isPassing(String reply) {
		for (String prefix : PASSING) {
			if (reply.startsWith(prefix)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns the error reply by which the server refused a command for good,
	 * found among a failure's causes.
	 * @param failure the failure
	 * @return the reply, or {@code null} when the failure is no such reply (no
	 * answer, a connection lost, a server not ready)
	 */
	static @Nullable String refusal(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (isReply(cause)) {
				String reply = String.valueOf(cause.getMessage());
				return isPassing(reply) ? null : reply;
			}
		}
		return null;
	}

	private static boolean isReply(Throwable failure) {
		for (Class<?> type = failure.getClass(); type != null; type = type.getSuperclass()) {
			if (REPLY_TYPES.contains(type.getName())) {
				return true;
			}
		}
		return false;
	}

}

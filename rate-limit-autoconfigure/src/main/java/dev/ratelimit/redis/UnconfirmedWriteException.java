package dev.ratelimit.redis;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;

import dev.ratelimit.core.UnconfirmedWrite;

/**
 * A limiter write that the primary applied but too few replicas acknowledged
 * within the durability timeout (see {@link ReplicaAcks}): a failover may lose
 * it. The call follows its limit's failure mode; a budget's reservation is
 * also released, so that it holds nothing.
 */
final class UnconfirmedWriteException extends DataAccessResourceFailureException implements UnconfirmedWrite {

	private static final long serialVersionUID = 1L;

	UnconfirmedWriteException(String message) {
		super(message);
	}

	UnconfirmedWriteException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

}

package dev.ratelimit.redis;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConnection;

/**
 * A connection factory of a type {@link RedisRateLimitBackend} cannot ask
 * whether it talks to a cluster, so the backend treats it as one: layered
 * decisions are grouped by slot and compensated, here on a standalone server
 * where every step can be watched.
 */
final class OpaqueConnectionFactory implements RedisConnectionFactory {

	private final RedisConnectionFactory delegate;

	OpaqueConnectionFactory(RedisConnectionFactory delegate) {
		this.delegate = delegate;
	}

	@Override
	public boolean getConvertPipelineAndTxResults() {
		return this.delegate.getConvertPipelineAndTxResults();
	}

	@Override
	public RedisConnection getConnection() {
		return this.delegate.getConnection();
	}

	@Override
	public RedisClusterConnection getClusterConnection() {
		return this.delegate.getClusterConnection();
	}

	@Override
	public RedisSentinelConnection getSentinelConnection() {
		return this.delegate.getSentinelConnection();
	}

	@Override
	public DataAccessException translateExceptionIfPossible(RuntimeException ex) {
		return this.delegate.translateExceptionIfPossible(ex);
	}

}

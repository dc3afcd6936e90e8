package dev.ratelimit.support;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.api.async.RedisAsyncCommands;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Proves {@link RedisSentinelFixture} gives tests a real Sentinel deployment
 * whose every method does what it says: a failover switches the address the
 * sentinels report and the old primary is demoted, a killed or frozen primary
 * is replaced, and a restarted or thawed node rejoins as a replica.
 */
class RedisSentinelFixtureTests {

	private static final Duration SWITCH_TIMEOUT = Duration.ofSeconds(30);

	private RedisSentinelFixture sentinel;

	@BeforeEach
	void start() {
		this.sentinel = RedisSentinelFixture.start();
	}

	@AfterEach
	void stop() {
		this.sentinel.close();
	}

	@Test
	void startsAPrimaryWithAReplicaInSyncWatchedByThreeSentinels() {
		int primary = this.sentinel.serverPorts().get(0);
		int replica = this.sentinel.serverPorts().get(1);

		assertThat(this.sentinel.masterName()).isEqualTo("mymaster");
		assertThat(this.sentinel.sentinelPorts()).hasSize(3).doesNotContainAnyElementsOf(this.sentinel.serverPorts());
		assertThat(this.sentinel.primaryPort()).isEqualTo(primary);
		assertThat(this.sentinel.replicaPort()).isEqualTo(replica);
		for (int port : this.sentinel.sentinelPorts()) {
			assertThat(this.sentinel.primaryPortReportedBy(port)).isEqualTo(primary);
			assertThat(this.sentinel.call(port, "SENTINEL", "CKQUORUM", "mymaster")).startsWith("+OK 3 usable");
		}
		assertThat(this.sentinel.call(primary, "SET", "k", "v")).isEqualTo("+OK");
		assertThat(this.sentinel.call(replica, "SET", "k", "v")).startsWith("-READONLY");
	}

	@Test
	void connectionFactoriesReachThePrimaryThroughTheSentinels() throws Exception {
		LettuceConnectionFactory limiter = this.sentinel.newConnectionFactory();
		LettuceConnectionFactory plain = this.sentinel.newEvalShaConnectionFactory();
		try {
			new StringRedisTemplate(limiter).opsForValue().set("from-limiter", "1");
			new StringRedisTemplate(plain).opsForValue().set("from-plain", "1");

			int primary = this.sentinel.primaryPort();
			assertThat(this.sentinel.call(primary, "EXISTS", "from-limiter", "from-plain")).isEqualTo(":2");
			// The limiter's factory loaded its functions on the primary; the replica has them by replication.
			assertThat(this.sentinel.call(primary, "FUNCTION", "LIST")).isEqualTo("*1");
			try (RedisConnection connection = plain.getConnection()) {
				// WAIT on the connection that wrote (the shared one): the replica has the keys afterwards.
				RedisAsyncCommands<?, ?> shared = (RedisAsyncCommands<?, ?>) connection.getNativeConnection();
				assertThat(shared.waitForReplication(1, 5000).get(10, TimeUnit.SECONDS)).isEqualTo(1L);
			}
			assertThat(this.sentinel.call(this.sentinel.replicaPort(), "EXISTS", "from-limiter", "from-plain"))
				.isEqualTo(":2");
		}
		finally {
			limiter.destroy();
			plain.destroy();
		}
	}

	@Test
	void failoverSwitchesThePrimaryAndTheSentinelsThenDemoteTheOldOne() {
		int old = this.sentinel.primaryPort();
		int replica = this.sentinel.replicaPort();
		LettuceConnectionFactory factory = this.sentinel.newEvalShaConnectionFactory();
		try {
			StringRedisTemplate template = new StringRedisTemplate(factory);
			template.opsForValue().set("before", "1");

			assertThat(this.sentinel.failover()).isEqualTo(replica);

			for (int port : this.sentinel.sentinelPorts()) {
				assertThat(this.sentinel.primaryPortReportedBy(port)).isEqualTo(replica);
			}
			assertThat(this.sentinel.call(replica, "SET", "k", "v")).isEqualTo("+OK");
			// Not demoted yet: the old primary still takes writes, also from the client that was on it.
			assertThat(this.sentinel.call(old, "SET", "lost", "v")).isEqualTo("+OK");
			template.opsForValue().set("lost-too", "1");
			assertThat(this.sentinel.call(old, "EXISTS", "lost-too")).isEqualTo(":1");

			this.sentinel.awaitReplica(old, SWITCH_TIMEOUT);

			assertThat(this.sentinel.replicaPort()).isEqualTo(old);
			assertThat(this.sentinel.call(old, "SET", "k", "v")).startsWith("-READONLY");
			// The demotion closed the client's connection; Lettuce reconnected through the sentinels.
			template.opsForValue().set("after", "1");
			assertThat(this.sentinel.call(replica, "EXISTS", "before", "after", "lost", "lost-too")).isEqualTo(":2");
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void failoverAndAwaitReplicaCanFailBackAtOnce() {
		int first = this.sentinel.primaryPort();
		int second = this.sentinel.replicaPort();

		assertThat(this.sentinel.failoverAndAwaitReplica()).isEqualTo(second);
		assertThat(this.sentinel.call(first, "SET", "k", "v")).startsWith("-READONLY");

		assertThat(this.sentinel.failoverAndAwaitReplica()).isEqualTo(first);
		assertThat(this.sentinel.primaryPort()).isEqualTo(first);
		assertThat(this.sentinel.call(second, "SET", "k", "v")).startsWith("-READONLY");
		assertThat(this.sentinel.call(first, "SET", "k", "v")).isEqualTo("+OK");
	}

	@Test
	void killedPrimaryIsReplacedAndRestartRejoinsItAsAReplica() throws IOException {
		int old = this.sentinel.primaryPort();
		int replica = this.sentinel.replicaPort();
		setAndWaitForReplica(old, "kept");

		assertThat(this.sentinel.killPrimary()).isEqualTo(old);
		assertThatThrownBy(() -> this.sentinel.call(old, "PING")).hasRootCauseInstanceOf(IOException.class);

		assertThat(this.sentinel.awaitSwitch(old, SWITCH_TIMEOUT)).isEqualTo(replica);
		assertThat(this.sentinel.primaryPort()).isEqualTo(replica);
		assertThat(this.sentinel.call(replica, "EXISTS", "kept")).isEqualTo(":1");

		this.sentinel.restart(old);

		// Back with its original command, empty, and made a replica of the new primary by the sentinels.
		assertThat(this.sentinel.replicaPort()).isEqualTo(old);
		assertThat(this.sentinel.call(old, "EXISTS", "kept")).isEqualTo(":1");
		assertThat(this.sentinel.call(old, "SET", "k", "v")).startsWith("-READONLY");
	}

	@Test
	void frozenPrimaryIsFailedOverAndRejoinsAsAReplicaWhenThawed() throws IOException {
		int old = this.sentinel.primaryPort();
		int replica = this.sentinel.replicaPort();
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", old), 1000);
			socket.setSoTimeout(300);

			this.sentinel.pause(old);
			Resp.send(socket.getOutputStream(), "PING");
			assertThatThrownBy(() -> Resp.readLine(socket.getInputStream()))
				.isInstanceOf(SocketTimeoutException.class);
			assertThat(this.sentinel.awaitSwitch(old, SWITCH_TIMEOUT)).isEqualTo(replica);
			this.sentinel.resume(old);

			socket.setSoTimeout(5000);
			assertThat(Resp.readLine(socket.getInputStream())).isEqualTo("+PONG");
		}
		this.sentinel.awaitReplica(old, SWITCH_TIMEOUT);
		assertThat(this.sentinel.call(old, "SET", "k", "v")).startsWith("-READONLY");
	}

	@Test
	void killedSentinelRestartsAndKnowsTheDeploymentAgain() {
		int port = this.sentinel.sentinelPorts().get(0);

		this.sentinel.kill(port);
		assertThat(this.sentinel.primaryPort()).isEqualTo(this.sentinel.serverPorts().get(0));
		this.sentinel.restart(port);

		assertThat(this.sentinel.primaryPortReportedBy(port)).isEqualTo(this.sentinel.serverPorts().get(0));
		assertThat(this.sentinel.call(port, "SENTINEL", "CKQUORUM", "mymaster")).startsWith("+OK 3 usable");
	}

	/**
	 * Writes a key and waits for the replica to have it: {@code WAIT} on the
	 * connection that wrote, as it waits for that connection's offset.
	 */
	private static void setAndWaitForReplica(int port, String key) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
			socket.setSoTimeout(10000);
			Resp.send(socket.getOutputStream(), "SET", key, "v");
			assertThat(Resp.readLine(socket.getInputStream())).isEqualTo("+OK");
			Resp.send(socket.getOutputStream(), "WAIT", "1", "5000");
			assertThat(Resp.readLine(socket.getInputStream())).isEqualTo(":1");
		}
	}

}

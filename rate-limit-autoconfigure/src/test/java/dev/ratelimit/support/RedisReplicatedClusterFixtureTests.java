package dev.ratelimit.support;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Proves {@link RedisReplicatedClusterFixture} gives tests a real cluster of
 * three masters with a replica each, and that its every method does what it
 * says: a manual failover swaps a master and its replica, a killed or frozen
 * master is replaced by its replica, and a restarted or thawed one follows it.
 */
class RedisReplicatedClusterFixtureTests {

	private static final Duration PROMOTION_TIMEOUT = Duration.ofSeconds(30);

	/** Keys of shards 0, 1 and 2: slots 0..5460, 5461..10921 and 10922..16383. */
	private static final List<String> KEYS = List.of(keyIn(0, 5460), keyIn(5461, 10921), keyIn(10922, 16383));

	private RedisReplicatedClusterFixture cluster;

	@AfterEach
	void stop() {
		if (this.cluster != null) {
			this.cluster.close();
		}
	}

	@Test
	void startsThreeMastersEachWithAReplicaInSync() throws IOException {
		this.cluster = RedisReplicatedClusterFixture.start();
		List<Integer> ports = this.cluster.ports();

		assertThat(ports).hasSize(6).doesNotHaveDuplicates();
		assertThat(this.cluster.masterPorts()).isEqualTo(ports.subList(0, 3));
		assertThat(this.cluster.replicaPorts()).isEqualTo(ports.subList(3, 6));
		for (int shard = 0; shard < 3; shard++) {
			int master = ports.get(shard);
			int replica = ports.get(shard + 3);
			assertThat(this.cluster.replicaOf(master)).isEqualTo(replica);
			assertThat(this.cluster.masterPortForSlot(ClusterSlotHashUtil.calculateSlot(KEYS.get(shard))))
				.isEqualTo(master);
			setAndWaitForReplica(master, KEYS.get(shard));
			assertThat(readFromReplica(replica, KEYS.get(shard))).isEqualTo(":1");
			// A replica redirects to its master, as the other masters do.
			assertThat(this.cluster.call(replica, "SET", KEYS.get(shard), "v")).endsWith(":" + master);
		}
		assertThat(this.cluster.masterPortForSlot(0)).isEqualTo(ports.get(0));
		assertThat(this.cluster.masterPortForSlot(5461)).isEqualTo(ports.get(1));
		assertThat(this.cluster.masterPortForSlot(16383)).isEqualTo(ports.get(2));
		assertThat(this.cluster.query(ports.get(0), "CONFIG", "GET", "cluster-node-timeout")).isEqualTo(
				"[cluster-node-timeout, 1000]");
		for (int port : ports) {
			assertThat(this.cluster.query(port, "CLUSTER", "INFO")).contains("cluster_state:ok",
					"cluster_known_nodes:6", "cluster_size:3");
		}
	}

	@Test
	void failoverSwapsAMasterAndItsReplicaAndRedirectsTheOldMastersClients() throws IOException {
		this.cluster = RedisReplicatedClusterFixture.start();
		int master = this.cluster.masterPorts().get(0);
		int replica = this.cluster.replicaOf(master);
		String key = KEYS.get(0);
		setAndWaitForReplica(master, key);
		try (Socket client = connect(master)) {
			assertThat(command(client, "SET", key, "before")).isEqualTo("+OK");

			assertThat(this.cluster.failover(replica)).isEqualTo(master);

			assertThat(this.cluster.masterPorts()).containsExactly(replica, this.cluster.ports().get(1),
					this.cluster.ports().get(2));
			assertThat(this.cluster.replicaOf(replica)).isEqualTo(master);
			assertThat(this.cluster.masterPortForSlot(ClusterSlotHashUtil.calculateSlot(key))).isEqualTo(replica);
			// The old master's client is still connected, and redirected: no write is lost to it.
			assertThat(command(client, "SET", key, "after")).startsWith("-MOVED ").endsWith(":" + replica);
			assertThat(command(client, "GET", key)).startsWith("-MOVED ").endsWith(":" + replica);
		}
		assertThat(this.cluster.query(replica, "GET", key)).isEqualTo("before");
		assertThat(readFromReplica(master, key)).isEqualTo(":1");
	}

	@Test
	void killedMasterIsReplacedByItsReplicaAndRejoinsAsItsReplica() throws IOException {
		this.cluster = RedisReplicatedClusterFixture.start();
		int master = this.cluster.masterPorts().get(1);
		int replica = this.cluster.replicaOf(master);
		String key = KEYS.get(1);
		setAndWaitForReplica(master, key);

		this.cluster.killMaster(master);

		assertThat(this.cluster.awaitPromotion(master, PROMOTION_TIMEOUT)).isEqualTo(replica);
		assertThat(this.cluster.masterPorts().get(1)).isEqualTo(replica);
		assertThat(this.cluster.query(replica, "GET", key)).isEqualTo("v");
		assertThat(this.cluster.replicaPorts()).doesNotContain(master, replica);

		this.cluster.restart(master);

		assertThat(this.cluster.replicaOf(replica)).isEqualTo(master);
		assertThat(this.cluster.replicaPorts()).contains(master);
		assertThat(readFromReplica(master, key)).isEqualTo(":1");
		assertThat(this.cluster.call(master, "SET", key, "v")).endsWith(":" + replica);
	}

	@Test
	void frozenMasterIsReplacedAndFollowsItsReplicaWhenThawed() {
		this.cluster = RedisReplicatedClusterFixture.start();
		int master = this.cluster.masterPorts().get(2);
		int replica = this.cluster.replicaOf(master);

		this.cluster.pause(master);

		assertThat(this.cluster.awaitPromotion(master, PROMOTION_TIMEOUT)).isEqualTo(replica);
		assertThat(this.cluster.call(replica, "SET", KEYS.get(2), "v")).isEqualTo("+OK");

		this.cluster.resume(master);
		this.cluster.awaitSettled(PROMOTION_TIMEOUT);

		assertThat(this.cluster.replicaOf(replica)).isEqualTo(master);
		assertThat(this.cluster.call(master, "SET", KEYS.get(2), "v")).endsWith(":" + replica);
	}

	@Test
	void withFullCoverageAShardWithoutMasterStopsTheWholeCluster() {
		this.cluster = RedisReplicatedClusterFixture.start();
		killShard(0);

		int other = this.cluster.masterPorts().get(1);
		assertThat(this.cluster.query(other, "CLUSTER", "INFO")).contains("cluster_state:fail");
		assertThat(this.cluster.call(other, "SET", KEYS.get(1), "v")).startsWith("-CLUSTERDOWN");
	}

	@Test
	void withoutFullCoverageTheOtherShardsKeepServing() {
		this.cluster = RedisReplicatedClusterFixture.start(false);
		killShard(0);

		int other = this.cluster.masterPorts().get(1);
		assertThat(this.cluster.query(other, "CLUSTER", "INFO")).contains("cluster_state:ok");
		assertThat(this.cluster.call(other, "SET", KEYS.get(1), "v")).isEqualTo("+OK");
		assertThat(this.cluster.call(other, "SET", KEYS.get(0), "v")).startsWith("-MOVED ");
	}

	@Test
	void connectionFactoriesServeEveryShard() {
		this.cluster = RedisReplicatedClusterFixture.start();
		LettuceConnectionFactory limiter = this.cluster.newConnectionFactory();
		LettuceConnectionFactory plain = this.cluster.newEvalShaConnectionFactory();
		try {
			for (String key : KEYS) {
				new StringRedisTemplate(limiter).opsForValue().set(key, "limiter");
				assertThat(new StringRedisTemplate(plain).opsForValue().get(key)).isEqualTo("limiter");
			}
			for (int master : this.cluster.masterPorts()) {
				assertThat(this.cluster.call(master, "DBSIZE")).isEqualTo(":1");
				// The limiter's factory loaded its functions on every master.
				assertThat(this.cluster.call(master, "FUNCTION", "LIST")).isEqualTo("*1");
			}
			this.cluster.flushAll();
			for (int master : this.cluster.masterPorts()) {
				assertThat(this.cluster.call(master, "DBSIZE")).isEqualTo(":0");
			}
		}
		finally {
			limiter.destroy();
			plain.destroy();
		}
	}

	/**
	 * Kills a shard's replica, then its master, and waits until the other
	 * masters have flagged the master as failed: from then on the
	 * coverage setting decides.
	 */
	private void killShard(int shard) {
		int master = this.cluster.masterPorts().get(shard);
		this.cluster.kill(this.cluster.replicaOf(master));
		this.cluster.killMaster(master);
		long deadline = System.nanoTime() + PROMOTION_TIMEOUT.toNanos();
		for (int other : this.cluster.masterPorts()) {
			if (other == master) {
				continue;
			}
			while (!flaggedFailed(other, master)) {
				assertThat(System.nanoTime() - deadline).as("port %d flags port %d as failed", other, master)
					.isNegative();
				// Polling a cluster that is changing, as the fixture does: the only place a short pause is needed.
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
			}
		}
	}

	private boolean flaggedFailed(int viewer, int port) {
		return this.cluster.query(viewer, "CLUSTER", "NODES")
			.lines()
			.anyMatch((line) -> line.contains("127.0.0.1:" + port + "@") && line.split(" ")[2].contains("fail")
					&& !line.split(" ")[2].contains("fail?"));
	}

	/**
	 * Writes a key and waits for the replica to have it: {@code WAIT} on the
	 * connection that wrote, as it waits for that connection's offset.
	 */
	private static void setAndWaitForReplica(int port, String key) throws IOException {
		try (Socket socket = connect(port)) {
			assertThat(command(socket, "SET", key, "v")).isEqualTo("+OK");
			assertThat(command(socket, "WAIT", "1", "5000")).isEqualTo(":1");
		}
	}

	/** A replica answers for keys only on a connection that said {@code READONLY}. */
	private static String readFromReplica(int port, String key) throws IOException {
		try (Socket socket = connect(port)) {
			assertThat(command(socket, "READONLY")).isEqualTo("+OK");
			return command(socket, "EXISTS", key);
		}
	}

	private static Socket connect(int port) throws IOException {
		Socket socket = new Socket();
		socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
		socket.setSoTimeout(10000);
		return socket;
	}

	private static String command(Socket socket, String... arguments) throws IOException {
		Resp.send(socket.getOutputStream(), arguments);
		InputStream in = socket.getInputStream();
		return Resp.readLine(in);
	}

	private static String keyIn(int firstSlot, int lastSlot) {
		for (int i = 0;; i++) {
			String key = "key-" + i;
			int slot = ClusterSlotHashUtil.calculateSlot(key);
			if (slot >= firstSlot && slot <= lastSlot) {
				return key;
			}
		}
	}

}

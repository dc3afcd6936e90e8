package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The clients of {@link AdaptiveCapExperiment}: an open-loop load of logical
 * calls arriving at a fixed mean rate (Poisson), a given share of them
 * {@code X-Priority: critical} and the rest {@code normal}, each retried at
 * once, whatever {@code Retry-After} says, when it fails (any status but 2xx,
 * a connection error, or no answer within the timeout, after which the
 * connection is dropped) up to a number of attempts: the retry storm.
 * <p>
 * One thread and one {@link Selector} drive every connection (keep-alive,
 * one request at a time each, opened on demand up to a maximum), so a single
 * core sustains thousands of calls per second; a call's latency runs from its
 * arrival to its successful answer, retries and any wait for a connection
 * included. Calls arriving in the measured window are counted; after it the
 * generator waits for them to end.
 */
final class RetryingLoad {

	/** Length of one time-series bucket. */
	static final long BUCKET_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

	private final InetSocketAddress address;

	private final byte[] criticalRequest;

	private final byte[] normalRequest;

	private final long timeoutNanos;

	private final int maxAttempts;

	private final int maxConnections;

	RetryingLoad(String host, int port, String path, int timeoutMillis, int maxAttempts, int maxConnections) {
		this.address = new InetSocketAddress(host, port);
		this.criticalRequest = request(host, port, path, "critical");
		this.normalRequest = request(host, port, path, "normal");
		this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
		this.maxAttempts = maxAttempts;
		this.maxConnections = maxConnections;
	}

	private static byte[] request(String host, int port, String path, String priority) {
		return ("GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\nX-Priority: " + priority + "\r\n\r\n")
			.getBytes(StandardCharsets.US_ASCII);
	}

	/**
	 * Runs a warm-up then a measured window at one rate.
	 * @param perSecond mean arrivals of logical calls per second
	 * @param criticalShare the share of calls that are critical
	 * @param warmupNanos the unmeasured period before the window
	 * @param measuredNanos the window
	 * @return what was measured, with a time series from the start of the warm-up
	 */
	Result run(double perSecond, double criticalShare, long warmupNanos, long measuredNanos) throws IOException {
		try (Loop loop = new Loop(perSecond, criticalShare, warmupNanos, measuredNanos)) {
			return loop.run();
		}
	}

	/** One logical call. */
	private static final class Call {

		final long arrival;

		final boolean critical;

		final boolean measured;

		int attempts;

		Call(long arrival, boolean critical, boolean measured) {
			this.arrival = arrival;
			this.critical = critical;
			this.measured = measured;
		}

	}

	/** One keep-alive connection and the attempt on it, if any. */
	private static final class Connection {

		final SocketChannel channel;

		SelectionKey key;

		boolean connected;

		Call call;

		long sentAt;

		/** Incremented at each attempt, so a stale timeout entry is recognised. */
		long attempt;

		ByteBuffer out;

		byte[] in = new byte[512];

		int inLength;

		Connection(SocketChannel channel) {
			this.channel = channel;
		}

	}

	private record Deadline(Connection connection, long attempt, long at) {
	}

	private final class Loop implements AutoCloseable {

		private final Selector selector = Selector.open();

		private final SplittableRandom random = new SplittableRandom(42);

		private final double meanGapNanos;

		private final double criticalShare;

		private final long start = System.nanoTime();

		private final long windowStart;

		private final long windowEnd;

		private final ArrayDeque<Connection> idle = new ArrayDeque<>();

		private final ArrayDeque<Call> waiting = new ArrayDeque<>();

		private final ArrayDeque<Deadline> deadlines = new ArrayDeque<>();

		private final Set<Connection> all = Collections.newSetFromMap(new IdentityHashMap<>());

		private final Result result;

		private int open;

		private long outstanding;

		private long measuredOutstanding;

		Loop(double perSecond, double criticalShare, long warmupNanos, long measuredNanos) throws IOException {
			this.meanGapNanos = 1e9 / perSecond;
			this.criticalShare = criticalShare;
			this.windowStart = this.start + warmupNanos;
			this.windowEnd = this.windowStart + measuredNanos;
			this.result = new Result(perSecond, measuredNanos / 1e9, this.start,
					(int) ((warmupNanos + measuredNanos) / BUCKET_NANOS) + 1);
		}

		Result run() throws IOException {
			long nextArrival = this.start;
			// After the window: wait for the measured calls, at most every attempt's timeout and a second more.
			long drainEnd = this.windowEnd + this.maxAttemptsNanos() + TimeUnit.SECONDS.toNanos(1);
			while (true) {
				long now = System.nanoTime();
				while (nextArrival <= now && nextArrival < this.windowEnd) {
					boolean measured = nextArrival >= this.windowStart;
					Call call = new Call(nextArrival, this.random.nextDouble() < this.criticalShare, measured);
					this.outstanding++;
					if (measured) {
						this.measuredOutstanding++;
						this.result.arrived(call.critical);
					}
					dispatch(call, now);
					nextArrival += (long) (-Math.log(1 - this.random.nextDouble()) * this.meanGapNanos);
				}
				expire(now);
				if (now >= this.windowEnd && (this.measuredOutstanding == 0 || now >= drainEnd)) {
					this.result.unfinished = this.measuredOutstanding;
					return this.result;
				}
				long wake = Math.min(nextArrival, this.deadlines.isEmpty() ? Long.MAX_VALUE : this.deadlines.peek().at);
				long waitMillis = Math.max(0, TimeUnit.NANOSECONDS.toMillis(wake - now));
				if (waitMillis == 0) {
					this.selector.selectNow();
				}
				else {
					this.selector.select(Math.min(waitMillis, 100));
				}
				now = System.nanoTime();
				Iterator<SelectionKey> keys = this.selector.selectedKeys().iterator();
				while (keys.hasNext()) {
					SelectionKey key = keys.next();
					keys.remove();
					Connection connection = (Connection) key.attachment();
					try {
						if (key.isValid() && key.isConnectable()) {
							connection.channel.finishConnect();
							connection.connected = true;
							key.interestOps(SelectionKey.OP_WRITE);
						}
						if (key.isValid() && key.isWritable()) {
							write(connection);
						}
						if (key.isValid() && key.isReadable()) {
							read(connection, now);
						}
					}
					catch (IOException ex) {
						broken(connection, now);
					}
				}
			}
		}

		private long maxAttemptsNanos() {
			return RetryingLoad.this.timeoutNanos * RetryingLoad.this.maxAttempts;
		}

		/** Sends a call's next attempt on an idle connection, a new one, or queues it for the next free one. */
		private void dispatch(Call call, long now) {
			Connection connection = this.idle.pollLast();
			if (connection == null) {
				if (this.open >= RetryingLoad.this.maxConnections) {
					this.waiting.add(call);
					this.result.waitedForConnection++;
					return;
				}
				try {
					connection = connect();
				}
				catch (IOException ex) {
					this.result.connectFailures++;
					finish(call, now, false);
					return;
				}
			}
			send(connection, call, now);
		}

		private Connection connect() throws IOException {
			SocketChannel channel = SocketChannel.open();
			channel.configureBlocking(false);
			channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
			// A dropped connection is reset, not left in TIME_WAIT: thousands are dropped per second without a cap.
			channel.setOption(StandardSocketOptions.SO_LINGER, 0);
			Connection connection = new Connection(channel);
			connection.connected = channel.connect(RetryingLoad.this.address);
			connection.key = channel.register(this.selector,
					connection.connected ? SelectionKey.OP_WRITE : SelectionKey.OP_CONNECT, connection);
			this.open++;
			this.all.add(connection);
			this.result.connects++;
			return connection;
		}

		private void send(Connection connection, Call call, long now) {
			call.attempts++;
			connection.call = call;
			connection.sentAt = now;
			connection.attempt++;
			connection.inLength = 0;
			connection.out = ByteBuffer
				.wrap(call.critical ? RetryingLoad.this.criticalRequest : RetryingLoad.this.normalRequest);
			this.deadlines.add(new Deadline(connection, connection.attempt, now + RetryingLoad.this.timeoutNanos));
			this.result.attempt(now);
			if (connection.connected) {
				try {
					write(connection);
				}
				catch (IOException ex) {
					broken(connection, now);
				}
			}
			else {
				connection.key.interestOps(SelectionKey.OP_CONNECT);
			}
		}

		private void write(Connection connection) throws IOException {
			connection.channel.write(connection.out);
			connection.key.interestOps(connection.out.hasRemaining() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
		}

		private void read(Connection connection, long now) throws IOException {
			while (true) {
				if (connection.inLength == connection.in.length) {
					connection.in = Arrays.copyOf(connection.in, connection.in.length * 2);
				}
				int n = connection.channel.read(ByteBuffer.wrap(connection.in, connection.inLength,
						connection.in.length - connection.inLength));
				if (n < 0) {
					if (HttpResponses.complete(connection.in, connection.inLength) == 0) {
						broken(connection, now);
						return;
					}
					// The server closed after a whole answer (Connection: close, as Tomcat does after a 503).
					break;
				}
				if (n == 0) {
					break;
				}
				connection.inLength += n;
			}
			int status = HttpResponses.complete(connection.in, connection.inLength);
			if (status == 0) {
				return;
			}
			Call call = connection.call;
			connection.call = null;
			boolean close = HttpResponses.closes(connection.in, connection.inLength);
			this.result.status(status);
			if (close) {
				drop(connection);
			}
			else {
				release(connection, now);
			}
			if (call != null) {
				ended(call, now, status >= 200 && status < 300);
			}
		}

		/** A connection error: the connection is dropped and its call, if any, failed. */
		private void broken(Connection connection, long now) {
			Call call = connection.call;
			connection.call = null;
			drop(connection);
			if (call != null) {
				this.result.ioErrors++;
				ended(call, now, false);
			}
		}

		private void expire(long now) {
			while (!this.deadlines.isEmpty()) {
				Deadline deadline = this.deadlines.peek();
				Connection connection = deadline.connection;
				boolean live = connection.call != null && connection.attempt == deadline.attempt;
				if (live && deadline.at > now) {
					return;
				}
				this.deadlines.poll();
				if (live) {
					Call call = connection.call;
					connection.call = null;
					this.result.timeouts++;
					drop(connection);
					ended(call, now, false);
				}
			}
		}

		private void drop(Connection connection) {
			if (connection.key != null) {
				connection.key.cancel();
			}
			try {
				connection.channel.close();
			}
			catch (IOException ex) {
				// closing anyway
			}
			connection.attempt++;
			this.open--;
			this.all.remove(connection);
			// A connection freed: a waiting call may open one.
			Call next = this.waiting.poll();
			if (next != null) {
				dispatch(next, System.nanoTime());
			}
		}

		private void release(Connection connection, long now) {
			Call next = this.waiting.poll();
			if (next != null) {
				send(connection, next, now);
			}
			else {
				connection.key.interestOps(0);
				this.idle.add(connection);
			}
		}

		/** An attempt ended: success ends the call, a failure is retried at once while attempts remain. */
		private void ended(Call call, long now, boolean ok) {
			if (!ok && call.attempts < RetryingLoad.this.maxAttempts) {
				this.result.retries++;
				dispatch(call, now);
				return;
			}
			finish(call, now, ok);
		}

		private void finish(Call call, long now, boolean ok) {
			this.outstanding--;
			if (call.measured) {
				this.measuredOutstanding--;
			}
			this.result.finished(call.critical, call.measured, ok, now, now - call.arrival);
		}

		@Override
		public void close() throws IOException {
			for (Connection connection : this.idle) {
				connection.channel.close();
			}
			for (Connection connection : new ArrayList<>(this.all)) {
				connection.channel.close();
			}
			this.selector.close();
		}

	}

	/** What one run measured. */
	static final class Result {

		final double offeredPerSecond;

		final double seconds;

		final long start;

		final long[] arrived = new long[2];

		final long[] served = new long[2];

		final LongList[] latencies = { new LongList(), new LongList() };

		long attempts;

		long retries;

		long timeouts;

		long ioErrors;

		long connectFailures;

		long connects;

		long waitedForConnection;

		long unfinished;

		final long[] statuses = new long[600];

		/** Per bucket: attempts sent, calls served, critical calls served and their latencies. */
		final long[] bucketAttempts;

		final long[] bucketServed;

		final LongList[] bucketCriticalLatencies;

		Result(double offeredPerSecond, double seconds, long start, int buckets) {
			this.offeredPerSecond = offeredPerSecond;
			this.seconds = seconds;
			this.start = start;
			this.bucketAttempts = new long[buckets];
			this.bucketServed = new long[buckets];
			this.bucketCriticalLatencies = new LongList[buckets];
			for (int i = 0; i < buckets; i++) {
				this.bucketCriticalLatencies[i] = new LongList();
			}
		}

		private int bucket(long now) {
			return (int) Math.min(this.bucketAttempts.length - 1, Math.max(0, (now - this.start) / BUCKET_NANOS));
		}

		void arrived(boolean critical) {
			this.arrived[critical ? 0 : 1]++;
		}

		void attempt(long now) {
			this.attempts++;
			this.bucketAttempts[bucket(now)]++;
		}

		void status(int status) {
			this.statuses[Math.max(0, Math.min(599, status))]++;
		}

		void finished(boolean critical, boolean measured, boolean ok, long now, long latency) {
			if (ok) {
				int bucket = bucket(now);
				this.bucketServed[bucket]++;
				if (critical) {
					this.bucketCriticalLatencies[bucket].add(latency);
				}
			}
			if (measured && ok) {
				int index = critical ? 0 : 1;
				this.served[index]++;
				this.latencies[index].add(latency);
			}
		}

		double goodput() {
			return (this.served[0] + this.served[1]) / this.seconds;
		}

		double servedShare(boolean critical) {
			int index = critical ? 0 : 1;
			return (this.arrived[index] == 0) ? Double.NaN : (double) this.served[index] / this.arrived[index];
		}

		/** A quantile of the served critical (or normal) calls' latency, in milliseconds. */
		double latencyMillis(boolean critical, double quantile) {
			return this.latencies[critical ? 0 : 1].quantile(quantile) / 1e6;
		}

		String statuses() {
			StringBuilder text = new StringBuilder();
			for (int status = 0; status < this.statuses.length; status++) {
				if (this.statuses[status] > 0) {
					text.append((text.length() > 0) ? ", " : "").append(status).append(": ").append(this.statuses[status]);
				}
			}
			return text.toString();
		}

	}

	/** A growable list of longs. */
	static final class LongList {

		private long[] values = new long[64];

		private int size;

		void add(long value) {
			if (this.size == this.values.length) {
				this.values = Arrays.copyOf(this.values, this.size * 2);
			}
			this.values[this.size++] = value;
		}

		int size() {
			return this.size;
		}

		/** Nearest-rank quantile, NaN when empty. */
		double quantile(double q) {
			if (this.size == 0) {
				return Double.NaN;
			}
			long[] sorted = Arrays.copyOf(this.values, this.size);
			Arrays.sort(sorted);
			int index = (int) Math.min(this.size - 1, Math.max(0, Math.ceil(q * this.size) - 1));
			return sorted[index];
		}

	}

	/** Just enough HTTP/1.1 response parsing for the experiment's small answers. */
	static final class HttpResponses {

		private HttpResponses() {
		}

		/** @return the status once the whole response is in {@code in}, else 0 */
		static int complete(byte[] in, int length) {
			int headersEnd = indexOf(in, length, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII), 0);
			if (headersEnd < 0 || length < 12) {
				return 0;
			}
			int bodyStart = headersEnd + 4;
			String head = new String(in, 0, headersEnd, StandardCharsets.US_ASCII).toLowerCase();
			int status = Integer.parseInt(head.substring(9, 12));
			int contentLength = head.indexOf("\r\ncontent-length:");
			if (contentLength >= 0) {
				int from = contentLength + 17;
				int to = head.indexOf("\r\n", from);
				long bodyLength = Long.parseLong(head.substring(from, (to < 0) ? head.length() : to).trim());
				return (length - bodyStart >= bodyLength) ? status : 0;
			}
			if (head.contains("\r\ntransfer-encoding: chunked")) {
				byte[] last = "0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
				boolean ends = length - bodyStart >= last.length
						&& indexOf(in, length, last, length - last.length) == length - last.length;
				return ends ? status : 0;
			}
			return status;
		}

		static boolean closes(byte[] in, int length) {
			String head = new String(in, 0, Math.min(length, 2048), StandardCharsets.US_ASCII).toLowerCase();
			return head.contains("\r\nconnection: close");
		}

		private static int indexOf(byte[] in, int length, byte[] what, int from) {
			outer: for (int i = Math.max(0, from); i <= length - what.length; i++) {
				for (int j = 0; j < what.length; j++) {
					if (in[i + j] != what[j]) {
						continue outer;
					}
				}
				return i;
			}
			return -1;
		}

	}

}

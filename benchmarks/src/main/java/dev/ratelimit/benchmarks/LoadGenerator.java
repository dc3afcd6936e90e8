package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * An HTTP load generator: N connections, each driven by its own thread that
 * sends a GET, waits for the whole response, and sends the next, for a warm-up
 * and then a measured period. Every measured request's latency is recorded.
 * <p>
 * Two ways to pace it. <b>Closed loop</b> ({@link #run}): each connection sends
 * its next request as soon as the last one is answered, so the server is
 * saturated; latencies are service times under N outstanding requests (no
 * coordinated-omission correction). <b>Open loop</b> ({@link #paced}): requests
 * are due at a fixed total rate, spread evenly over the connections; a
 * connection sends each request at its due time, or at once when it is late,
 * and a request's latency runs from its due time, so a stall is charged to
 * every request it delayed.
 */
final class LoadGenerator {

	private static final int TIMEOUT_MILLIS = 10_000;

	private LoadGenerator() {
	}

	/**
	 * What one run measured.
	 *
	 * @param requests requests started in the measured period and completed
	 * @param allRequests requests of the warm-up and the measured period
	 * @param non2xx responses of either period whose status was not 2xx
	 * @param firstNon2xx the status of the first such response, 0 if none
	 * @param connects sockets opened (more than the connections if the server closed some)
	 * @param seconds length of the measured period
	 * @param latenciesNanos every measured request's latency, sorted
	 */
	record Result(long requests, long allRequests, long non2xx, int firstNon2xx, long connects, double seconds,
			long[] latenciesNanos) {

		double perSecond() {
			return this.requests / this.seconds;
		}

		/** The latency at quantile {@code p} (nearest rank), in microseconds. */
		double percentileMicros(double p) {
			if (this.latenciesNanos.length == 0) {
				return Double.NaN;
			}
			int index = (int) Math.min(this.latenciesNanos.length - 1, Math.ceil(p * this.latenciesNanos.length) - 1);
			return this.latenciesNanos[Math.max(0, index)] / 1_000.0;
		}

	}

	/**
	 * Runs the load.
	 * @param host the server's address
	 * @param port the server's port
	 * @param path the path to GET
	 * @param connections concurrent connections, one thread each
	 * @param clientIps distinct client addresses sent in {@code X-Forwarded-For}, each
	 * connection cycling through all of them from its own offset; 1 sends no such header
	 * @param warmup the unrecorded period before the measured one
	 * @param measured the recorded period
	 * @return what was measured
	 * @throws IllegalStateException if any connection failed (refused, reset, timed out, bad response)
	 */
	static Result run(String host, int port, String path, int connections, int clientIps, Duration warmup,
			Duration measured) throws InterruptedException {
		return load(host, port, path, connections, clientIps, 0, warmup, measured);
	}

	/**
	 * Runs the load at a fixed rate (open loop): request {@code i} of connection
	 * {@code c} is due at {@code start + (i * connections + c) / rate}.
	 * @param host the server's address
	 * @param port the server's port
	 * @param path the path to GET
	 * @param connections concurrent connections, one thread each
	 * @param clientIps distinct client addresses, as for {@link #run}
	 * @param perSecond requests per second over all connections
	 * @param warmup the unrecorded period before the measured one
	 * @param measured the recorded period
	 * @return what was measured; latencies from each request's due time
	 * @throws IllegalStateException if any connection failed
	 */
	static Result paced(String host, int port, String path, int connections, int clientIps, double perSecond,
			Duration warmup, Duration measured) throws InterruptedException {
		if (perSecond <= 0) {
			throw new IllegalArgumentException("rate must be positive, was " + perSecond);
		}
		return load(host, port, path, connections, clientIps, 1e9 / perSecond, warmup, measured);
	}

	/** {@code gapNanos} 0 is the closed loop; otherwise the time between two requests due over all connections. */
	private static Result load(String host, int port, String path, int connections, int clientIps, double gapNanos,
			Duration warmup, Duration measured) throws InterruptedException {
		Worker[] workers = new Worker[connections];
		CountDownLatch ready = new CountDownLatch(connections);
		CountDownLatch go = new CountDownLatch(1);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		long[] window = new long[3];
		Thread[] threads = new Thread[connections];
		for (int c = 0; c < connections; c++) {
			HttpConnection connection = new HttpConnection(host, port, path, clientAddresses(clientIps, c, connections),
					TIMEOUT_MILLIS);
			Worker worker = new Worker(connection, ready, go, window, failure, gapNanos * connections, gapNanos * c);
			workers[c] = worker;
			threads[c] = new Thread(worker, "load-" + c);
			threads[c].setDaemon(true);
			threads[c].start();
		}
		ready.await();
		// Both boundaries are fixed before any request, so every thread switches from
		// warm-up to measurement (and stops) at the same instants.
		long start = System.nanoTime();
		window[0] = start + warmup.toNanos();
		window[1] = window[0] + measured.toNanos();
		window[2] = start;
		go.countDown();
		for (Thread thread : threads) {
			thread.join();
		}
		if (failure.get() != null) {
			throw new IllegalStateException("Load generator connection failed: " + failure.get(), failure.get());
		}
		long requests = 0;
		long all = 0;
		long non2xx = 0;
		int firstNon2xx = 0;
		long connects = 0;
		for (Worker worker : workers) {
			requests += worker.count;
			all += worker.all;
			non2xx += worker.non2xx;
			connects += worker.connection.connects();
			if (firstNon2xx == 0) {
				firstNon2xx = worker.firstNon2xx;
			}
		}
		long[] latencies = new long[(int) requests];
		int offset = 0;
		for (Worker worker : workers) {
			System.arraycopy(worker.latencies, 0, latencies, offset, worker.count);
			offset += worker.count;
		}
		Arrays.sort(latencies);
		return new Result(requests, all, non2xx, firstNon2xx, connects, measured.toNanos() / 1e9, latencies);
	}

	/**
	 * {@code count} addresses in 10.0.0.0/8 (none if {@code count} is 1), rotated so
	 * that connection {@code c} of {@code connections} starts at its own share of them.
	 */
	static List<String> clientAddresses(int count, int c, int connections) {
		if (count <= 1) {
			return List.of();
		}
		List<String> addresses = new ArrayList<>(count);
		int offset = (int) ((long) c * count / connections);
		for (int i = 0; i < count; i++) {
			int n = (offset + i) % count + 1;
			addresses.add("10." + ((n >> 16) & 0xff) + "." + ((n >> 8) & 0xff) + "." + (n & 0xff));
		}
		return addresses;
	}

	/** One connection's loop. Fields are read by the caller after {@link Thread#join()}. */
	private static final class Worker implements Runnable {

		private final HttpConnection connection;

		private final CountDownLatch ready;

		private final CountDownLatch go;

		private final long[] window;

		private final AtomicReference<Throwable> failure;

		/** Time between two of this connection's requests in the open loop; 0 in the closed loop. */
		private final double intervalNanos;

		/** When this connection's first request is due, after the start, in the open loop. */
		private final double offsetNanos;

		private long[] latencies = new long[1 << 16];

		private int count;

		private long all;

		private long non2xx;

		private int firstNon2xx;

		Worker(HttpConnection connection, CountDownLatch ready, CountDownLatch go, long[] window,
				AtomicReference<Throwable> failure, double intervalNanos, double offsetNanos) {
			this.connection = connection;
			this.ready = ready;
			this.go = go;
			this.window = window;
			this.failure = failure;
			this.intervalNanos = intervalNanos;
			this.offsetNanos = offsetNanos;
		}

		@Override
		public void run() {
			try (HttpConnection c = this.connection) {
				this.ready.countDown();
				this.go.await();
				long measureFrom = this.window[0];
				long end = this.window[1];
				long start = this.window[2];
				boolean paced = this.intervalNanos > 0;
				for (long i = 0; this.failure.get() == null; i++) {
					long t0 = paced ? start + (long) (this.offsetNanos + i * this.intervalNanos) : System.nanoTime();
					if (t0 - end >= 0) {
						break;
					}
					if (paced) {
						// Due later: wait for it. Late: send at once, the latency still counted from t0.
						for (long wait = t0 - System.nanoTime(); wait > 0; wait = t0 - System.nanoTime()) {
							LockSupport.parkNanos(wait);
						}
					}
					int status = c.get();
					long elapsed = System.nanoTime() - t0;
					this.all++;
					if (status < 200 || status > 299) {
						if (this.non2xx++ == 0) {
							this.firstNon2xx = status;
						}
					}
					if (t0 - measureFrom >= 0) {
						if (this.count == this.latencies.length) {
							this.latencies = Arrays.copyOf(this.latencies, this.count * 2);
						}
						this.latencies[this.count++] = elapsed;
					}
				}
			}
			catch (IOException | RuntimeException ex) {
				// The first failure stops every connection: a broken run is not a result.
				this.failure.compareAndSet(null, ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}

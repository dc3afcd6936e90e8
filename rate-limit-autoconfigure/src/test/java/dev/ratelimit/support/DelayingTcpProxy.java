package dev.ratelimit.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on a free local port in front of a server (a
 * {@link RedisServerFixture}), with plain sockets, that makes new connections
 * slow or impossible while traffic on established ones flows undelayed.
 * <ul>
 * <li>{@link #delayNewConnections(Duration)}: the first bytes of every new
 * connection, in both directions, are held back for that long, as on a busy
 * host or a slow network path; a client whose connect and handshake must
 * finish sooner fails. A very long delay makes an unanswering server: the TCP
 * connect succeeds, the handshake never does.</li>
 * <li>{@link #refuseNewConnections(boolean)}: new connections are closed as soon
 * as they are accepted, as by a server that is down.</li>
 * </ul>
 * The holding back is scheduled, not slept: no thread waits for it.
 */
public final class DelayingTcpProxy implements AutoCloseable {

	private final ServerSocket server;

	private final int targetPort;

	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "delaying-proxy-scheduler");
		thread.setDaemon(true);
		return thread;
	});

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final AtomicInteger accepted = new AtomicInteger();

	private volatile Duration delay;

	private volatile boolean refusing;

	private DelayingTcpProxy(ServerSocket server, int targetPort, Duration delay) {
		this.server = server;
		this.targetPort = targetPort;
		this.delay = delay;
	}

	/**
	 * Starts a proxy to a server on {@code 127.0.0.1}.
	 * @param targetPort the server's port
	 * @param delay how long the first bytes of each new connection are held back
	 * @return the running proxy, to be closed by the caller
	 */
	public static DelayingTcpProxy start(int targetPort, Duration delay) {
		try {
			ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
			DelayingTcpProxy proxy = new DelayingTcpProxy(server, targetPort, delay);
			Thread acceptor = new Thread(proxy::acceptLoop, "delaying-proxy-accept-" + server.getLocalPort());
			acceptor.setDaemon(true);
			acceptor.start();
			return proxy;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot start the proxy", ex);
		}
	}

	/**
	 * Returns the port clients connect to, on {@code 127.0.0.1}.
	 * @return the port
	 */
	public int port() {
		return this.server.getLocalPort();
	}

	/**
	 * Sets how long the first bytes of connections accepted from now on are held
	 * back; established connections are not affected.
	 * @param delay the delay
	 */
	public void delayNewConnections(Duration delay) {
		this.delay = delay;
	}

	/**
	 * Sets whether connections accepted from now on are closed at once.
	 * @param refusing whether to refuse
	 */
	public void refuseNewConnections(boolean refusing) {
		this.refusing = refusing;
	}

	/**
	 * Returns how many connections the proxy accepted, refused ones included.
	 * @return the count
	 */
	public int connectionsAccepted() {
		return this.accepted.get();
	}

	/**
	 * Stops accepting and closes every connection.
	 */
	@Override
	public void close() {
		closeQuietly(this.server);
		this.scheduler.shutdownNow();
		this.sockets.forEach(DelayingTcpProxy::closeQuietly);
	}

	private void acceptLoop() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				this.accepted.incrementAndGet();
				if (this.refusing) {
					closeQuietly(client);
					continue;
				}
				this.sockets.add(client);
				this.scheduler.schedule(() -> connect(client), this.delay.toNanos(), TimeUnit.NANOSECONDS);
			}
			catch (IOException ex) {
				// The server socket was closed: the proxy is stopping.
			}
		}
	}

	private void connect(Socket client) {
		Socket upstream = new Socket();
		this.sockets.add(upstream);
		try {
			upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.targetPort), 5000);
		}
		catch (IOException ex) {
			closeQuietly(client);
			closeQuietly(upstream);
			return;
		}
		try {
			// Without it, Nagle's algorithm and delayed ACKs add some 40 ms to every large write.
			client.setTcpNoDelay(true);
			upstream.setTcpNoDelay(true);
		}
		catch (IOException ex) {
			closeQuietly(client);
			closeQuietly(upstream);
			return;
		}
		pump(client, upstream, "up");
		pump(upstream, client, "down");
	}

	private static void pump(Socket from, Socket to, String direction) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[8192];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (IOException ex) {
				// One side went away: close both below.
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
			}
		}, "delaying-proxy-" + direction);
		thread.setDaemon(true);
		thread.start();
	}

	private static void closeQuietly(java.io.Closeable closeable) {
		try {
			closeable.close();
		}
		catch (IOException ex) {
			// Nothing to do: it is being discarded.
		}
	}

}

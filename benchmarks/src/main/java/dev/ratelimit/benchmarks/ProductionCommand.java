package dev.ratelimit.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.redis.RedisRateLimitBackend;

/**
 * The command {@link RedisRateLimitBackend} sends for one decision (a token
 * bucket's, unless another algorithm is asked for) on the limiter's own connection, as production connects it
 * ({@link RedisLimiterConnection}, function library loaded), as the server saw
 * it ({@code MONITOR}): so that a benchmark
 * replaying it with {@code redis-benchmark} sends exactly what production
 * sends, arguments included, whatever the backend's code does to build them.
 */
final class ProductionCommand {

	/** Effectively unlimited, as in the other benchmarks: 10^9 tokens, refilled at 10^9 per second. */
	static final long CAPACITY = 1_000_000_000L;

	private static final String MARK = "rlbench-capture-done";

	private ProductionCommand() {
	}

	/**
	 * The token-bucket policy the Redis benchmarks decide: capacity and rate so
	 * high that nothing is denied.
	 * @param name the policy's name
	 * @return the policy
	 */
	static RateLimitPolicy tokenBucket(String name) {
		return policy(Algorithm.TOKEN_BUCKET, name);
	}

	/**
	 * A policy of the given algorithm that denies nothing here: a capacity of
	 * 10^9, refilled at 10^9 a second, or counted in windows of one second.
	 * @param algorithm the algorithm
	 * @param name the policy's name
	 * @return the policy
	 */
	static RateLimitPolicy policy(Algorithm algorithm, String name) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name).algorithm(algorithm).capacity(CAPACITY);
		return algorithm.isRateBased() ? builder.refill(Refill.of(CAPACITY, Duration.ofSeconds(1))).build()
				: builder.window("1s").build();
	}

	/**
	 * Decides {@link #policy} of the given algorithm twice for {@code key}
	 * through a fresh backend on the limiter's connection, and returns the
	 * command the second decision sent.
	 * @param server the server
	 * @param algorithm the policy's algorithm
	 * @param key the key decided
	 * @return the command and its arguments, as sent
	 * @throws IllegalStateException if the decision took other than one command
	 */
	static List<String> capture(RedisServerProcess server, Algorithm algorithm, String key) {
		try (RedisLimiterConnection limiter = connect(server); Socket monitor = new Socket()) {
			RateLimitPolicy policy = policy(algorithm, "capture");
			RedisRateLimitBackend backend = new RedisRateLimitBackend(limiter.connectionFactory());
			backend.tryConsume(policy, key, 1);
			monitor.connect(new InetSocketAddress("127.0.0.1", server.port()), 1000);
			monitor.setSoTimeout(5000);
			BufferedReader in = new BufferedReader(
					new InputStreamReader(monitor.getInputStream(), StandardCharsets.ISO_8859_1));
			OutputStream out = monitor.getOutputStream();
			out.write("*1\r\n$7\r\nMONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			if (!"+OK".equals(in.readLine())) {
				throw new IllegalStateException("MONITOR refused");
			}
			backend.tryConsume(policy, key, 1);
			server.call("ECHO", MARK);
			List<List<String>> sent = new ArrayList<>();
			for (String line = in.readLine(); line != null; line = in.readLine()) {
				// Commands a script runs show as from "lua"; only the client's own count.
				if (line.contains(" lua] ")) {
					continue;
				}
				List<String> command = parse(line);
				if (command.size() == 2 && command.get(0).equalsIgnoreCase("ECHO") && command.get(1).equals(MARK)) {
					break;
				}
				sent.add(command);
			}
			if (sent.size() != 1) {
				throw new IllegalStateException("One decision sent " + sent.size() + " commands, not 1: " + sent);
			}
			return sent.get(0);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("MONITOR on port " + server.port() + " failed", ex);
		}
	}

	/**
	 * Connects the limiter to the server as production does, its function
	 * library loaded; the caller closes it.
	 * @param server the server
	 * @return the limiter's connection
	 * @throws IllegalStateException if it did not connect or Redis refused the library
	 */
	static RedisLimiterConnection connect(RedisServerProcess server) {
		return connect(server, RedisLimiterConnection.Coalescing.ON);
	}

	/**
	 * Connects the limiter to the server as {@link #connect(RedisServerProcess)}
	 * does, its decisions coalesced or each a call of its own.
	 * @param server the server
	 * @param coalescing whether decisions waiting at the same moment go as one call
	 * @return the limiter's connection
	 */
	static RedisLimiterConnection connect(RedisServerProcess server, RedisLimiterConnection.Coalescing coalescing) {
		// Never started: the limiter copies its configuration. Timeouts far above any reply here.
		LettuceConnectionFactory application = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", server.port()));
		RedisLimiterConnection limiter = new RedisLimiterConnection(application, Duration.ofSeconds(2),
				RedisLimiterConnection.DEFAULT_BUSY_TIMEOUT, Duration.ofSeconds(10), true,
				RedisLimiterConnection.Durability.NONE, Duration.ofSeconds(10), coalescing);
		limiter.connect();
		if (!limiter.usesFunctions()) {
			limiter.close();
			throw new IllegalStateException("The limiter did not load its function library into Redis at "
					+ limiter.address() + (limiter.isConnected() ? "" : ": " + limiter.lastConnectFailure()));
		}
		return limiter;
	}

	/**
	 * The arguments of one {@code MONITOR} line,
	 * {@code +1700000000.123456 [0 127.0.0.1:5555] "EVALSHA" "ab12" "1" ...}, unescaped
	 * (Redis writes them as {@code sdscatrepr} does).
	 */
	static List<String> parse(String line) {
		int at = line.indexOf("] ");
		if (at < 0) {
			throw new IllegalStateException("Not a MONITOR line: " + line);
		}
		List<String> arguments = new ArrayList<>();
		int i = at + 2;
		while (i < line.length()) {
			if (line.charAt(i) != '"') {
				throw new IllegalStateException("Not a MONITOR line: " + line);
			}
			i++;
			StringBuilder argument = new StringBuilder();
			while (line.charAt(i) != '"') {
				char c = line.charAt(i);
				if (c != '\\') {
					argument.append(c);
					i++;
					continue;
				}
				char escaped = line.charAt(i + 1);
				i += 2;
				switch (escaped) {
					case 'n' -> argument.append('\n');
					case 'r' -> argument.append('\r');
					case 't' -> argument.append('\t');
					case 'a' -> argument.append('\u0007');
					case 'b' -> argument.append('\b');
					case 'x' -> {
						argument.append((char) Integer.parseInt(line.substring(i, i + 2), 16));
						i += 2;
					}
					default -> argument.append(escaped);
				}
			}
			arguments.add(argument.toString());
			i += 2;
		}
		return arguments;
	}

}

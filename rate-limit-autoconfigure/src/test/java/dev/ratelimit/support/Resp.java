package dev.ratelimit.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The little of the Redis protocol the fixtures speak on raw sockets: one
 * command out, the first line of its reply back, or the whole reply where a
 * fixture must read an array (Sentinel's answers). Enough to start, probe and
 * configure servers without a client library.
 */
final class Resp {

	private Resp() {
	}

	static void send(OutputStream out, String... arguments) throws IOException {
		StringBuilder request = new StringBuilder().append('*').append(arguments.length).append("\r\n");
		for (String argument : arguments) {
			request.append('$')
				.append(argument.getBytes(StandardCharsets.UTF_8).length)
				.append("\r\n")
				.append(argument)
				.append("\r\n");
		}
		out.write(request.toString().getBytes(StandardCharsets.UTF_8));
		out.flush();
	}

	static String readLine(InputStream in) throws IOException {
		StringBuilder line = new StringBuilder();
		int c;
		while ((c = in.read()) != -1 && c != '\n') {
			if (c != '\r') {
				line.append((char) c);
			}
		}
		if (c == -1 && line.length() == 0) {
			throw new IOException("connection closed without a reply");
		}
		return line.toString();
	}

	/**
	 * Reads one whole RESP2 reply: a status as its text (without {@code +}), an
	 * integer as a {@link Long}, a bulk string as a {@link String} ({@code null}
	 * for nil), an array as a {@link List} of replies, an error as an
	 * {@link Error}. Give it a buffered stream: it reads byte by byte.
	 * @param in the connection's input
	 * @return the reply
	 * @throws IOException if the connection ends inside the reply
	 */
	static Object read(InputStream in) throws IOException {
		String line = readLine(in);
		if (line.isEmpty()) {
			throw new IOException("empty reply line");
		}
		String rest = line.substring(1);
		switch (line.charAt(0)) {
			case '+':
				return rest;
			case '-':
				return new Error(rest);
			case ':':
				return Long.parseLong(rest);
			case '$': {
				int length = Integer.parseInt(rest);
				if (length < 0) {
					return null;
				}
				byte[] bulk = in.readNBytes(length + 2);
				if (bulk.length < length + 2) {
					throw new IOException("connection closed in a bulk reply");
				}
				return new String(bulk, 0, length, StandardCharsets.UTF_8);
			}
			case '*': {
				int count = Integer.parseInt(rest);
				if (count < 0) {
					return null;
				}
				List<Object> elements = new ArrayList<>(count);
				for (int i = 0; i < count; i++) {
					elements.add(read(in));
				}
				return elements;
			}
			default:
				throw new IOException("not a RESP2 reply: " + line);
		}
	}

	/**
	 * An error reply, kept apart from strings so that a bulk string starting
	 * with {@code -} is never taken for one.
	 * @param message the error, such as {@code NOGOODSLAVE No suitable replica to promote}
	 */
	record Error(String message) {
	}

}

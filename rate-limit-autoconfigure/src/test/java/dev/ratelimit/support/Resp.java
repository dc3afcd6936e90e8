package dev.ratelimit.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The little of the Redis protocol the fixtures speak on raw sockets: one
 * command out, the first line of its reply back. Enough to start, probe and
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

}

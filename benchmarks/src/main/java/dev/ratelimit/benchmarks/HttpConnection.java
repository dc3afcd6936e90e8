package dev.ratelimit.benchmarks;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One HTTP/1.1 keep-alive client connection over a raw socket, sending GET
 * requests one at a time and reading each response whole: status line,
 * headers, then a body framed by {@code Content-Length}, by chunked transfer
 * coding, or by the end of the connection. When the server answers
 * {@code Connection: close} (or closes), the next request opens a new socket.
 * <p>
 * Hand-written rather than {@code java.net.http.HttpClient} so that the load
 * generator, which shares the machine's cores with the server, spends as
 * little CPU and allocation per request as possible: its own buffer (no
 * synchronized {@code BufferedInputStream}), header names compared as bytes,
 * and the body skipped unless asked for.
 */
final class HttpConnection implements AutoCloseable {

	private static final byte[] CONTENT_LENGTH = "content-length:".getBytes(StandardCharsets.US_ASCII);

	private static final byte[] TRANSFER_ENCODING = "transfer-encoding:".getBytes(StandardCharsets.US_ASCII);

	private static final byte[] CONNECTION = "connection:".getBytes(StandardCharsets.US_ASCII);

	private final String host;

	private final int port;

	private final int timeoutMillis;

	/** The requests sent in turn: one, or one per {@code X-Forwarded-For} client address. */
	private final byte[][] requests;

	private int next;

	private final byte[] buffer = new byte[16 * 1024];

	private int position;

	private int limit;

	/** The current header or chunk-size line, without its CRLF. */
	private byte[] line = new byte[256];

	private int lineLength;

	private Socket socket;

	private InputStream in;

	private OutputStream out;

	private long connects;

	/**
	 * A full response, kept only when asked for (readiness probes, diagnostics).
	 *
	 * @param status the status code
	 * @param headers the header lines as received
	 * @param body the body, decoded as UTF-8
	 */
	record Response(int status, List<String> headers, String body) {

		/** The first value of the named header, or {@code null}. */
		String header(String name) {
			for (String header : this.headers) {
				int colon = header.indexOf(':');
				if (colon > 0 && header.substring(0, colon).trim().equalsIgnoreCase(name)) {
					return header.substring(colon + 1).trim();
				}
			}
			return null;
		}

	}

	HttpConnection(String host, int port, String path, int timeoutMillis) {
		this(host, port, path, List.of(), timeoutMillis);
	}

	/**
	 * A connection whose requests name, in turn, each of {@code forwardedFor} as
	 * the client in {@code X-Forwarded-For} (none if the list is empty).
	 */
	HttpConnection(String host, int port, String path, List<String> forwardedFor, int timeoutMillis) {
		this.host = host;
		this.port = port;
		this.timeoutMillis = timeoutMillis;
		String head = "GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\nAccept: */*\r\n";
		if (forwardedFor.isEmpty()) {
			this.requests = new byte[][] { (head + "\r\n").getBytes(StandardCharsets.US_ASCII) };
		}
		else {
			this.requests = new byte[forwardedFor.size()][];
			for (int i = 0; i < this.requests.length; i++) {
				this.requests[i] = (head + "X-Forwarded-For: " + forwardedFor.get(i) + "\r\n\r\n")
					.getBytes(StandardCharsets.US_ASCII);
			}
		}
	}

	/** Sockets opened so far, the first included. */
	long connects() {
		return this.connects;
	}

	/**
	 * Sends the request and reads the response, discarding its headers and body.
	 * @return the status code
	 * @throws IOException if the server cannot be reached or breaks the protocol
	 */
	int get() throws IOException {
		return exchange(nextRequest(), null, null);
	}

	/**
	 * Sends a request of the caller's own instead of this connection's, such as
	 * a POST with a body, and reads the response, discarding its headers and body.
	 * @param request the whole request as it goes on the wire, for this host
	 * @return the status code
	 * @throws IOException if the server cannot be reached or breaks the protocol
	 */
	int send(byte[] request) throws IOException {
		return exchange(request, null, null);
	}

	/**
	 * Sends the request and reads the whole response.
	 * @return the response with its headers and body
	 * @throws IOException if the server cannot be reached or breaks the protocol
	 */
	Response getFully() throws IOException {
		List<String> headers = new ArrayList<>();
		ByteArrayOutputStream body = new ByteArrayOutputStream();
		int status = exchange(nextRequest(), headers, body);
		return new Response(status, headers, body.toString(StandardCharsets.UTF_8));
	}

	/** This connection's requests in turn, one per call. */
	private byte[] nextRequest() {
		byte[] request = this.requests[this.next];
		this.next = (this.next + 1 == this.requests.length) ? 0 : this.next + 1;
		return request;
	}

	private int exchange(byte[] request, List<String> headers, ByteArrayOutputStream body) throws IOException {
		if (this.socket == null) {
			open();
		}
		this.out.write(request);
		this.out.flush();
		int status;
		boolean close;
		do {
			// A 1xx interim response is followed by the real one; none is expected for GET.
			status = readStatusLine();
			close = readHeadersAndBody(status, headers, body);
		}
		while (status >= 100 && status < 200);
		if (close) {
			closeSocket();
		}
		return status;
	}

	/** Reads headers and body; returns whether the connection must be closed afterwards. */
	private boolean readHeadersAndBody(int status, List<String> headers, ByteArrayOutputStream body)
			throws IOException {
		long contentLength = -1;
		boolean chunked = false;
		boolean close = false;
		while (readLine() > 0) {
			if (headers != null) {
				headers.add(new String(this.line, 0, this.lineLength, StandardCharsets.ISO_8859_1));
			}
			if (startsWithIgnoreCase(CONTENT_LENGTH)) {
				contentLength = Long.parseLong(value(CONTENT_LENGTH));
			}
			else if (startsWithIgnoreCase(TRANSFER_ENCODING)) {
				chunked = value(TRANSFER_ENCODING).toLowerCase(Locale.ROOT).endsWith("chunked");
			}
			else if (startsWithIgnoreCase(CONNECTION)) {
				close = value(CONNECTION).toLowerCase(Locale.ROOT).contains("close");
			}
		}
		if ((status >= 100 && status < 200) || status == 204 || status == 304) {
			return close;
		}
		if (chunked) {
			readChunked(body);
		}
		else if (contentLength >= 0) {
			skip(contentLength, body);
		}
		else {
			// No framing: the body runs to the end of the connection.
			skip(Long.MAX_VALUE, body);
			return true;
		}
		return close;
	}

	private void readChunked(ByteArrayOutputStream body) throws IOException {
		while (true) {
			if (readLine() < 0) {
				throw new IOException("Connection closed inside a chunked body");
			}
			String size = new String(this.line, 0, this.lineLength, StandardCharsets.ISO_8859_1);
			int semicolon = size.indexOf(';');
			long length = Long.parseLong((semicolon >= 0) ? size.substring(0, semicolon).trim() : size.trim(), 16);
			if (length == 0) {
				// Trailer fields, if any, up to the empty line.
				while (readLine() > 0) {
					// ignored
				}
				return;
			}
			skip(length, body);
			if (readLine() != 0) {
				throw new IOException("Chunk not followed by CRLF");
			}
		}
	}

	private int readStatusLine() throws IOException {
		if (readLine() < 0) {
			throw new IOException("Connection closed before a response");
		}
		// "HTTP/1.1 200 OK" (Tomcat sends no reason phrase: "HTTP/1.1 200 ").
		if (this.lineLength < 12 || this.line[0] != 'H' || this.line[8] != ' ') {
			throw new IOException("Not an HTTP status line: "
					+ new String(this.line, 0, this.lineLength, StandardCharsets.ISO_8859_1));
		}
		int status = 0;
		for (int i = 9; i < 12; i++) {
			int digit = this.line[i] - '0';
			if (digit < 0 || digit > 9) {
				throw new IOException("Bad status code in "
						+ new String(this.line, 0, this.lineLength, StandardCharsets.ISO_8859_1));
			}
			status = status * 10 + digit;
		}
		return status;
	}

	/**
	 * Reads one line into {@link #line} without its line ending.
	 * @return its length, or -1 at the end of the stream before any byte
	 */
	private int readLine() throws IOException {
		this.lineLength = 0;
		while (true) {
			if (this.position == this.limit && !fill()) {
				if (this.lineLength == 0) {
					return -1;
				}
				throw new IOException("Connection closed inside a line");
			}
			byte b = this.buffer[this.position++];
			if (b == '\n') {
				if (this.lineLength > 0 && this.line[this.lineLength - 1] == '\r') {
					this.lineLength--;
				}
				return this.lineLength;
			}
			if (this.lineLength == this.line.length) {
				this.line = Arrays.copyOf(this.line, this.line.length * 2);
			}
			this.line[this.lineLength++] = b;
		}
	}

	private void skip(long length, ByteArrayOutputStream body) throws IOException {
		long remaining = length;
		while (remaining > 0) {
			if (this.position == this.limit && !fill()) {
				if (length == Long.MAX_VALUE) {
					return;
				}
				throw new IOException("Connection closed with " + remaining + " body bytes to come");
			}
			int n = (int) Math.min(remaining, this.limit - this.position);
			if (body != null) {
				body.write(this.buffer, this.position, n);
			}
			this.position += n;
			remaining -= n;
		}
	}

	private boolean fill() throws IOException {
		int n = this.in.read(this.buffer);
		if (n <= 0) {
			return false;
		}
		this.position = 0;
		this.limit = n;
		return true;
	}

	private boolean startsWithIgnoreCase(byte[] prefix) {
		if (this.lineLength < prefix.length) {
			return false;
		}
		for (int i = 0; i < prefix.length; i++) {
			// Lower-casing ASCII letters by setting bit 0x20; prefixes are lower case letters, '-' and ':'.
			byte b = this.line[i];
			if (b >= 'A' && b <= 'Z') {
				b = (byte) (b | 0x20);
			}
			if (b != prefix[i]) {
				return false;
			}
		}
		return true;
	}

	private String value(byte[] prefix) {
		return new String(this.line, prefix.length, this.lineLength - prefix.length, StandardCharsets.ISO_8859_1).trim();
	}

	private void open() throws IOException {
		Socket s = new Socket();
		// Small requests and responses: do not let Nagle's algorithm hold them back.
		s.setTcpNoDelay(true);
		s.connect(new InetSocketAddress(this.host, this.port), this.timeoutMillis);
		s.setSoTimeout(this.timeoutMillis);
		this.socket = s;
		this.in = s.getInputStream();
		this.out = s.getOutputStream();
		this.position = 0;
		this.limit = 0;
		this.connects++;
	}

	private void closeSocket() {
		if (this.socket != null) {
			try {
				this.socket.close();
			}
			catch (IOException ex) {
				// closing anyway
			}
			this.socket = null;
			this.in = null;
			this.out = null;
		}
	}

	@Override
	public void close() {
		closeSocket();
	}

}

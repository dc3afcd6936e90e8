package dev.ratelimit.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.http.HttpConnectTimeoutException;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

import dev.ratelimit.Limits;
import dev.ratelimit.aop.WorkScope;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.TimeSource;

/**
 * The client of one provider, as a {@link ClientHttpRequestInterceptor} of a
 * {@code RestClient}. A call:
 * <ol>
 * <li>waits out a pause the provider asked for (from any instance when the
 * pauses are shared), plus a random part of the pause jitter, or fails at once
 * with {@link ProviderPausedException} when the pause outlasts the deadline;</li>
 * <li>per attempt, takes a unit of the provider's rate-limit policy (waiting
 * its turn, as the policy's max-wait allows) and a permit of its concurrency
 * cap, held until the response is closed;</li>
 * <li>reads {@code Retry-After} and the rate-limit fields of every answer, and
 * records the pause they ask for;</li>
 * <li>tries again after a 429, a 503 or a failure to connect, for a method it
 * retries, while attempts are left: after the provider's pause when it gave
 * one, else after a backoff with full jitter. When the wait would pass the
 * deadline, the provider's answer (or the connection failure) is the call's,
 * at once.</li>
 * </ol>
 * A request already handled by a client (a builder customized twice) passes
 * through the second one untouched.
 */
public final class ProviderClient implements ClientHttpRequestInterceptor {

	private static final String HANDLED = ProviderClient.class.getName() + ".handled";

	private final ClientSettings settings;

	private final @Nullable Limits limits;

	private final PauseStore pauses;

	private final TimeSource time;

	private final Sleeper sleeper;

	private final JitterSource jitter;

	private final ClientListener listener;

	private volatile long knownPausedUntil;

	/**
	 * Creates a client.
	 * @param settings the provider's settings
	 * @param limits the configured limits, or {@code null} when the settings name none
	 * @param pauses where the provider's pauses are kept
	 * @param time the clock
	 * @param sleeper how a call waits
	 * @param jitter random numbers for backoff and pause jitter
	 * @param listener hears attempts, retries, waits and pauses
	 */
	public ProviderClient(ClientSettings settings, @Nullable Limits limits, PauseStore pauses, TimeSource time,
			Sleeper sleeper, JitterSource jitter, ClientListener listener) {
		if ((settings.rateLimit() != null || settings.concurrency() != null) && limits == null) {
			throw new IllegalArgumentException("Client '" + settings.name() + "' names limits but none are given");
		}
		this.settings = settings;
		this.limits = limits;
		this.pauses = pauses;
		this.time = time;
		this.sleeper = sleeper;
		this.jitter = jitter;
		this.listener = listener;
	}

	/** @return the provider's settings */
	public ClientSettings settings() {
		return this.settings;
	}

	/**
	 * Returns whether this instance knows of a pause of the provider in force,
	 * without asking the store: for a gauge.
	 * @return whether paused, as last seen
	 */
	public boolean isPaused() {
		return this.knownPausedUntil > this.time.currentTimeMicros();
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		if (request.getAttributes().putIfAbsent(HANDLED, this.settings.name()) != null) {
			return execution.execute(request, body);
		}
		String name = this.settings.name();
		long deadline = this.time.currentTimeMicros() + this.settings.deadlineMicros();
		boolean retries = this.settings.retries(request.getMethod().name());
		long pause = pauseRemaining();
		if (pause > 0) {
			long wait = pause + jitter(this.settings.pauseJitterMicros());
			long left = deadline - this.time.currentTimeMicros();
			if (wait > left) {
				throw new ProviderPausedException(name, pause, left);
			}
			sleep("pause", wait);
		}
		for (int attempt = 1;; attempt++) {
			ClientHttpResponse response;
			try {
				response = attempt(request, body, execution);
			}
			catch (IOException ex) {
				boolean connect = isConnectFailure(ex);
				this.listener.attempted(name, connect ? "connect" : "io");
				long wait = connect ? backoff(attempt) : 0;
				if (!connect || !retries || attempt >= this.settings.maxAttempts()
						|| this.time.currentTimeMicros() + wait > deadline) {
					throw ex;
				}
				this.listener.retrying(name, "connect");
				sleep("backoff", wait);
				continue;
			}
			int status = response.getStatusCode().value();
			readPause(response.getHeaders());
			this.listener.attempted(name, outcome(status));
			if ((status != 429 && status != 503) || !retries || attempt >= this.settings.maxAttempts()) {
				return response;
			}
			// The provider's pause, asked for by this answer or recorded by another call, else the backoff.
			long paused = pauseRemaining();
			boolean pausing = paused > 0;
			long wait = pausing ? paused + jitter(this.settings.pauseJitterMicros()) : backoff(attempt);
			if (this.time.currentTimeMicros() + wait > deadline) {
				return response;
			}
			response.close();
			this.listener.retrying(name, Integer.toString(status));
			sleep(pausing ? "pause" : "backoff", wait);
		}
	}

	private ClientHttpResponse attempt(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		if (this.settings.rateLimit() != null) {
			this.limits.acquire(this.settings.rateLimit(), null);
		}
		Permit permit = (this.settings.concurrency() != null) ? this.limits.permit(this.settings.concurrency(), null)
				: null;
		// A budgeted call around this one has now paid for work: a later refusal of ours is no longer free.
		WorkScope.workStarts();
		if (permit == null) {
			return execution.execute(request, body);
		}
		try {
			// Held until the body is read and the response closed: the provider works until then.
			return new PermitHoldingResponse(execution.execute(request, body), permit);
		}
		catch (IOException | RuntimeException | Error ex) {
			permit.release();
			throw ex;
		}
	}

	private void readPause(HttpHeaders headers) {
		long now = this.time.currentTimeMicros();
		long retryAfter = ProviderSignals.retryAfterMicros(headers.getFirst(HttpHeaders.RETRY_AFTER), now);
		long exhausted = ProviderSignals.exhaustedQuotaMicros(headers::getFirst);
		long pause = Math.max(retryAfter, exhausted);
		if (pause > 0) {
			this.listener.paused(this.settings.name(), (retryAfter >= exhausted) ? "retry-after" : "exhausted", pause);
			this.pauses.pause(this.settings.name(), pause);
			remember(pause);
		}
	}

	private long pauseRemaining() {
		long remaining = this.pauses.remainingMicros(this.settings.name());
		remember(remaining);
		return remaining;
	}

	private void remember(long pauseMicros) {
		long until = this.time.currentTimeMicros() + pauseMicros;
		if (until > this.knownPausedUntil) {
			this.knownPausedUntil = until;
		}
	}

	private long backoff(int retry) {
		return Backoff.fullJitterMicros(retry, this.settings.backoffMicros(), this.settings.maxBackoffMicros(),
				this.jitter.next());
	}

	private long jitter(long maxMicros) {
		return (maxMicros > 0) ? (long) (maxMicros * this.jitter.next()) : 0;
	}

	private void sleep(String reason, long micros) throws IOException {
		this.listener.waited(this.settings.name(), reason, micros);
		if (micros <= 0) {
			return;
		}
		try {
			this.sleeper.sleepMicros(micros);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("Interrupted while waiting to call provider '" + this.settings.name() + "'", ex);
		}
	}

	private static String outcome(int status) {
		if (status == 429 || status == 503) {
			return Integer.toString(status);
		}
		return (status < 400) ? "success" : (status < 500) ? "client-error" : "server-error";
	}

	/** No connection was made, so the provider never saw the request. */
	private static boolean isConnectFailure(IOException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof ConnectException || cause instanceof NoRouteToHostException
					|| cause instanceof HttpConnectTimeoutException) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

	/** A response that gives its permit back when closed. */
	private static final class PermitHoldingResponse implements ClientHttpResponse {

		private final ClientHttpResponse delegate;

		private final Permit permit;

		PermitHoldingResponse(ClientHttpResponse delegate, Permit permit) {
			this.delegate = delegate;
			this.permit = permit;
		}

		@Override
		public HttpStatusCode getStatusCode() throws IOException {
			return this.delegate.getStatusCode();
		}

		@Override
		public String getStatusText() throws IOException {
			return this.delegate.getStatusText();
		}

		@Override
		public HttpHeaders getHeaders() {
			return this.delegate.getHeaders();
		}

		@Override
		public InputStream getBody() throws IOException {
			return this.delegate.getBody();
		}

		@Override
		public void close() {
			try {
				this.delegate.close();
			}
			finally {
				this.permit.release();
			}
		}

	}

}

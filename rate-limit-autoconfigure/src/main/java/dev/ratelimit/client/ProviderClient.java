package dev.ratelimit.client;

import java.io.IOException;
import java.io.InputStream;

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
 * through the second one untouched. The rules are the provider's
 * {@link ProviderCallPolicy}, shared with its reactive
 * {@link ProviderExchangeFilter}: this class only carries them out, waiting
 * with the {@link Sleeper}.
 */
public final class ProviderClient implements ClientHttpRequestInterceptor {

	private final ProviderCallPolicy policy;

	private final Sleeper sleeper;

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
		this.policy = new ProviderCallPolicy(settings, limits, pauses, time, jitter, listener);
		this.sleeper = sleeper;
	}

	/** @return the provider's settings */
	public ClientSettings settings() {
		return this.policy.settings();
	}

	/**
	 * Returns whether this instance knows of a pause of the provider in force,
	 * without asking the store: for a gauge. Calls through the provider's
	 * {@code WebClient} filter count too.
	 * @return whether paused, as last seen
	 */
	public boolean isPaused() {
		return this.policy.isPaused();
	}

	/**
	 * Describes a call the provider refused, its 429 or 503 being the call's
	 * answer once the attempts or the deadline were spent, as the client
	 * describes a call refused by a pause in force: a
	 * {@link ProviderPausedException} for the pause the provider asked for. A
	 * web application answers it through {@link dev.ratelimit.web.servlet.Rejections}
	 * like every other refusal by the provider's capacity: 503 with
	 * {@code Retry-After}, naming nothing. Calls through the provider's
	 * {@code WebClient} filter count too. May block: it reads the pause store.
	 * @return the exception, to answer or to throw
	 */
	public ProviderPausedException refusal() {
		return new ProviderPausedException(settings().name(), this.policy.pauseRemainingMicros());
	}

	/** The rules, shared with the provider's {@link ProviderExchangeFilter}. */
	ProviderCallPolicy policy() {
		return this.policy;
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		if (request.getAttributes().putIfAbsent(ProviderCallPolicy.HANDLED, settings().name()) != null) {
			return execution.execute(request, body);
		}
		ProviderCallPolicy.Call call = this.policy.start(request.getMethod().name());
		sleep(call.beforeFirstAttempt());
		while (true) {
			ClientHttpResponse response;
			try {
				response = attempt(call, request, body, execution);
			}
			catch (IOException ex) {
				ProviderCallPolicy.Next next = call.afterFailure(ex);
				if (!next.retry()) {
					throw ex;
				}
				sleep(next.waitMicros());
				continue;
			}
			ProviderCallPolicy.Next next = call.afterAnswer(response.getStatusCode().value(),
					response.getHeaders()::getFirst);
			if (!next.retry()) {
				return response;
			}
			response.close();
			sleep(next.waitMicros());
		}
	}

	private ClientHttpResponse attempt(ProviderCallPolicy.Call call, HttpRequest request, byte[] body,
			ClientHttpRequestExecution execution) throws IOException {
		Permit permit = call.takeTurn();
		// A budgeted call around this one has now paid for work: a later refusal of ours is no longer free.
		WorkScope.workStarts();
		try {
			// Held until the body is read and the response closed: the provider works until then.
			return new PermitHoldingResponse(execution.execute(request, body), permit);
		}
		catch (IOException | RuntimeException | Error ex) {
			permit.release();
			throw ex;
		}
	}

	private void sleep(long micros) throws IOException {
		if (micros <= 0) {
			return;
		}
		try {
			this.sleeper.sleepMicros(micros);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("Interrupted while waiting to call provider '" + settings().name() + "'", ex);
		}
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

package dev.ratelimit.client;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.http.HttpConnectTimeoutException;
import java.util.Objects;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.Limits;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.TimeSource;

/**
 * The rules of one provider's calls, written once for the blocking
 * {@link ProviderClient} and the reactive {@link ProviderExchangeFilter}: each
 * of them only carries out what a {@link Call} decides, in its own way of
 * waiting. A call asks, in turn:
 * <ol>
 * <li>{@link Call#beforeFirstAttempt()}: how long to wait for a pause the
 * provider asked for (or {@link ProviderPausedException} when it outlasts the
 * deadline);</li>
 * <li>{@link Call#takeTurn()}: a unit of the provider's rate and a permit of its
 * cap for the attempt;</li>
 * <li>{@link Call#afterAnswer} or {@link Call#afterFailure}: whether to try
 * again, and after how long.</li>
 * </ol>
 * The steps that may block (the pause store on Redis, the limiter's wait for
 * its turn) are named so, for the reactive side to run them off its event loop.
 */
final class ProviderCallPolicy {

	/** The request attribute that marks a request as handled by a provider client. */
	static final String HANDLED = ProviderCallPolicy.class.getName() + ".handled";

	private static final Permit NO_PERMIT = () -> {
	};

	private final ClientSettings settings;

	private final @Nullable Limits limits;

	private final PauseStore pauses;

	private final TimeSource time;

	private final JitterSource jitter;

	private final ClientListener listener;

	private volatile long knownPausedUntil;

	ProviderCallPolicy(ClientSettings settings, @Nullable Limits limits, PauseStore pauses, TimeSource time,
			JitterSource jitter, ClientListener listener) {
		if ((settings.rateLimit() != null || settings.concurrency() != null) && limits == null) {
			throw new IllegalArgumentException("Client '" + settings.name() + "' names limits but none are given");
		}
		this.settings = settings;
		this.limits = limits;
		this.pauses = pauses;
		this.time = time;
		this.jitter = jitter;
		this.listener = listener;
	}

	/** The limits a client that names some is given, as the constructor checks. */
	private Limits limits() {
		return Objects.requireNonNull(this.limits, "a client that names limits is given them");
	}

	ClientSettings settings() {
		return this.settings;
	}

	/** Whether a pause of the provider is in force, as last seen, without asking the store. */
	boolean isPaused() {
		return this.knownPausedUntil > this.time.currentTimeMicros();
	}

	/**
	 * Starts a call: its deadline runs from now.
	 * @param method the HTTP method, which decides whether the call is retried
	 * @return the call
	 */
	Call start(String method) {
		return new Call(this.time.currentTimeMicros() + this.settings.deadlineMicros(), this.settings.retries(method));
	}

	/**
	 * What to do after an attempt.
	 * @param retry whether to try again; when not, the answer or failure is the call's
	 * @param reason {@code backoff} or {@code pause}, for the wait's metric
	 * @param waitMicros how long to wait before the next attempt
	 */
	record Next(boolean retry, String reason, long waitMicros) {

		/** The answer or failure is the call's. */
		static final Next DONE = new Next(false, "none", 0);

	}

	/**
	 * One call's progress: its deadline and attempts. Its steps are taken one
	 * after the other, never at once.
	 */
	final class Call {

		private final long deadline;

		private final boolean retries;

		private int attempts;

		private Call(long deadline, boolean retries) {
			this.deadline = deadline;
			this.retries = retries;
		}

		/**
		 * Returns how long to wait before the first attempt: a pause in force
		 * (from any instance when pauses are shared) plus a random part of the
		 * pause jitter. May block: it reads the pause store.
		 * @return the wait in microseconds, zero when there is no pause
		 * @throws ProviderPausedException when the wait would pass the deadline
		 */
		long beforeFirstAttempt() {
			long pause = pauseRemainingMicros();
			if (pause <= 0) {
				return 0;
			}
			long wait = pause + jitter(ProviderCallPolicy.this.settings.pauseJitterMicros());
			long left = this.deadline - ProviderCallPolicy.this.time.currentTimeMicros();
			if (wait > left) {
				throw new ProviderPausedException(ProviderCallPolicy.this.settings.name(), pause, left);
			}
			waited("pause", wait);
			return wait;
		}

		/**
		 * Takes what an attempt needs: a unit of the provider's rate (waiting its
		 * turn, as the policy's max-wait allows) and a permit of its cap, which
		 * the caller releases when the attempt's response is done with. May
		 * block: the limiter waits here.
		 * @return the permit; releasing it does nothing when no cap is configured
		 * @throws dev.ratelimit.core.RateLimitException when the rate or the cap refuses
		 */
		Permit takeTurn() {
			this.attempts++;
			ClientSettings settings = ProviderCallPolicy.this.settings;
			if (settings.rateLimit() != null) {
				limits().acquire(settings.rateLimit(), null);
			}
			return (settings.concurrency() != null) ? limits().permit(settings.concurrency(), null) : NO_PERMIT;
		}

		/**
		 * Reads an answer: records the pause it asks for, and decides whether to
		 * try again after a 429 or 503, after the provider's pause when one is in
		 * force, else after a backoff with full jitter. May block: it writes and
		 * reads the pause store.
		 * @param status the answer's status
		 * @param header the first value of a header field by name, or {@code null}
		 * @return what to do; {@link Next#DONE} when the answer is the call's
		 */
		Next afterAnswer(int status, UnaryOperator<@Nullable String> header) {
			String name = ProviderCallPolicy.this.settings.name();
			readPause(header);
			ProviderCallPolicy.this.listener.attempted(name, outcome(status));
			if ((status != 429 && status != 503) || !this.retries || attemptsUsed()) {
				return Next.DONE;
			}
			// The provider's pause, asked for by this answer or recorded by another call, else the backoff.
			long paused = pauseRemainingMicros();
			boolean pausing = paused > 0;
			long wait = pausing ? paused + jitter(ProviderCallPolicy.this.settings.pauseJitterMicros())
					: backoff(this.attempts);
			return retry(Integer.toString(status), pausing ? "pause" : "backoff", wait);
		}

		/**
		 * Reads a failed attempt: a failure to connect (the provider never saw
		 * the request) is tried again after a backoff with full jitter; any
		 * other failure is the call's.
		 * @param failure what the attempt failed with
		 * @return what to do; {@link Next#DONE} when the failure is the call's
		 */
		Next afterFailure(Throwable failure) {
			boolean connect = isConnectFailure(failure);
			ProviderCallPolicy.this.listener.attempted(ProviderCallPolicy.this.settings.name(),
					connect ? "connect" : "io");
			if (!connect || !this.retries || attemptsUsed()) {
				return Next.DONE;
			}
			return retry("connect", "backoff", backoff(this.attempts));
		}

		private boolean attemptsUsed() {
			return this.attempts >= ProviderCallPolicy.this.settings.maxAttempts();
		}

		/** A wait that would pass the deadline is not made: what the attempt met is the call's. */
		private Next retry(String cause, String reason, long wait) {
			if (ProviderCallPolicy.this.time.currentTimeMicros() + wait > this.deadline) {
				return Next.DONE;
			}
			ProviderCallPolicy.this.listener.retrying(ProviderCallPolicy.this.settings.name(), cause);
			waited(reason, wait);
			return new Next(true, reason, wait);
		}

		private void waited(String reason, long micros) {
			ProviderCallPolicy.this.listener.waited(ProviderCallPolicy.this.settings.name(), reason, micros);
		}

	}

	private void readPause(UnaryOperator<@Nullable String> header) {
		long now = this.time.currentTimeMicros();
		long retryAfter = ProviderSignals.retryAfterMicros(header.apply("Retry-After"), now);
		long exhausted = ProviderSignals.exhaustedQuotaMicros(header);
		long pause = Math.max(retryAfter, exhausted);
		if (pause > 0) {
			this.listener.paused(this.settings.name(), (retryAfter >= exhausted) ? "retry-after" : "exhausted", pause);
			this.pauses.pause(this.settings.name(), pause);
			remember(pause);
		}
	}

	/** How long the provider is still paused, as the pause store says. May block: it reads the store. */
	long pauseRemainingMicros() {
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

	private static String outcome(int status) {
		if (status == 429 || status == 503) {
			return Integer.toString(status);
		}
		return (status < 400) ? "success" : (status < 500) ? "client-error" : "server-error";
	}

	/**
	 * No connection was made, so the provider never saw the request. Reactor
	 * Netty's connect failures and connect timeouts are {@link ConnectException}s too.
	 */
	static boolean isConnectFailure(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
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

}

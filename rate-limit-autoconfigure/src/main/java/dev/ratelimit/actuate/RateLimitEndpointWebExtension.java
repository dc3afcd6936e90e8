package dev.ratelimit.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

import dev.ratelimit.core.Causes;
import dev.ratelimit.live.OverrideStoreException;

/**
 * The HTTP side of the {@code ratelimits} endpoint's override operations: an
 * override store that cannot take a change (Redis down) answers
 * {@code 503 Service Unavailable} with the reason, rather than 500, since the
 * request was fine and can be sent again once the store answers; an override
 * that would change no caller answers {@code 409 Conflict} with the reason and
 * the requests that would reach callers. The endpoint itself throws, which JMX
 * reports with the same reason. A key whose store could not be read (a Redis
 * Cluster node down) answers {@code 503} with what failed and where.
 */
@EndpointWebExtension(endpoint = RateLimitEndpoint.class)
public class RateLimitEndpointWebExtension {

	private static final int STATUS_CONFLICT = 409;

	private final RateLimitEndpoint endpoint;

	/**
	 * Creates the extension.
	 * @param endpoint the endpoint
	 */
	RateLimitEndpointWebExtension(RateLimitEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * Reports one key's state (or a limit's top keys), as
	 * {@link RateLimitEndpoint#key} does.
	 * @param policy the limit's name
	 * @param key the caller's key, or {@code top}
	 * @return the state; 404 for an unknown limit; 503 with what failed and where
	 * when the store could not be read (a Redis Cluster node down)
	 */
	@ReadOperation
	public WebEndpointResponse<Object> key(@Selector String policy, @Selector String key) {
		RateLimitEndpoint.KeyState state = this.endpoint.key(policy, key);
		if (state == null) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		if (state instanceof RateLimitEndpoint.UnavailableKeyState unavailable) {
			return new WebEndpointResponse<>(unavailable, WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
		}
		return new WebEndpointResponse<>(state);
	}

	/**
	 * Resets one key of a rate limit or a budget, as {@link RateLimitEndpoint#reset} does.
	 * @param policy the policy name
	 * @param key the caller's key
	 * @return what was reset; 400 for an unknown policy or a cap; 503 with the
	 * reason when the store could not take the reset
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> reset(@Selector String policy, @Selector String key) {
		try {
			return new WebEndpointResponse<>(this.endpoint.reset(policy, key));
		}
		catch (InvalidEndpointRequestException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			// The store failed (Redis down, a Cluster node down): the request was fine and can be sent again.
			return unavailable("The store could not reset key '" + key + "' of '" + policy + "': "
					+ Causes.describe(ex));
		}
	}

	/**
	 * Overrides a configured limit's numbers, as {@link RateLimitEndpoint#override} does.
	 * @param name the limit's name
	 * @param plan the plan to override, or {@code null} for the limit itself
	 * @param capacity a rate limit's capacity
	 * @param refill a rate limit's refill
	 * @param window a window algorithm's window
	 * @param amount a budget's amount, in units
	 * @param permits a concurrency cap's permits
	 * @param force whether to apply an override that would change no caller
	 * @return the limit's overrides now; 409 with the reason when the override would change no
	 * caller; 503 with the reason when the store did not take it
	 */
	@WriteOperation
	public WebEndpointResponse<Object> override(@Selector String name, @Nullable String plan,
			@Nullable String capacity, @Nullable String refill, @Nullable String window, @Nullable String amount,
			@Nullable String permits, @Nullable Boolean force) {
		try {
			return new WebEndpointResponse<>(
					this.endpoint.override(name, plan, capacity, refill, window, amount, permits, force));
		}
		catch (ChangeRefusedException ex) {
			return conflict(ex);
		}
		catch (OverrideStoreException ex) {
			return unavailable(ex);
		}
	}

	/**
	 * Removes a run-time override, as {@link RateLimitEndpoint#removeOverride} does.
	 * @param name the limit's name
	 * @param plan the plan whose override to remove, or {@code null} for the limit's own
	 * @return the limit's overrides now, or 503 with the reason when the store did not take the removal
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> removeOverride(@Selector String name, @Nullable String plan) {
		try {
			return new WebEndpointResponse<>(this.endpoint.removeOverride(name, plan));
		}
		catch (OverrideStoreException ex) {
			return unavailable(ex);
		}
	}

	private static WebEndpointResponse<Object> conflict(ChangeRefusedException ex) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("status", STATUS_CONFLICT);
		body.put("error", "Conflict");
		body.put("message", ex.getReason());
		body.put("recentCallers", ex.recentCallers());
		body.put("instead", ex.instead());
		return new WebEndpointResponse<>(body, STATUS_CONFLICT);
	}

	private static WebEndpointResponse<Object> unavailable(OverrideStoreException ex) {
		return unavailable(ex.getMessage());
	}

	private static WebEndpointResponse<Object> unavailable(@Nullable String message) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("status", WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
		body.put("error", "Service Unavailable");
		body.put("message", message);
		return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
	}

}

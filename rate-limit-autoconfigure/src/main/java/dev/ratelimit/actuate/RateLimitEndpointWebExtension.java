package dev.ratelimit.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

import dev.ratelimit.live.OverrideStoreException;

/**
 * The HTTP side of the {@code ratelimits} endpoint's override operations: an
 * override store that cannot take a change (Redis down) answers
 * {@code 503 Service Unavailable} with the reason, rather than 500, since the
 * request was fine and can be sent again once the store answers; an override
 * that would change no caller answers {@code 409 Conflict} with the reason and
 * the requests that would reach callers. The endpoint itself throws, which JMX
 * reports with the same reason.
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
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("status", WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
		body.put("error", "Service Unavailable");
		body.put("message", ex.getMessage());
		return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
	}

}

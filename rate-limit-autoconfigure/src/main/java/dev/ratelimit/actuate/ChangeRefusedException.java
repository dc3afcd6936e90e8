package dev.ratelimit.actuate;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

/**
 * An operator's change refused because it would change no caller's limit:
 * answered {@code 409 Conflict} over HTTP by {@link RateLimitEndpointWebExtension}
 * with what to send instead, and a failed operation with the same reason over
 * JMX. Sending the change again with {@code "force": true} applies it.
 */
public class ChangeRefusedException extends InvalidEndpointRequestException {

	private final transient RateLimitEndpoint.@Nullable RecentCallersDescriptor recentCallers;

	private final transient List<Map<String, Object>> instead;

	/**
	 * Creates the refusal.
	 * @param reason why, and what to send instead
	 * @param recentCallers the limit's recent callers by plan, or {@code null} when they are not counted
	 * @param instead the requests that would reach callers: the same numbers for each plan
	 */
	ChangeRefusedException(String reason, RateLimitEndpoint.@Nullable RecentCallersDescriptor recentCallers,
			List<Map<String, Object>> instead) {
		super(reason, reason);
		this.recentCallers = recentCallers;
		this.instead = instead;
	}

	/** @return the limit's recent callers by plan, or {@code null} when they are not counted */
	public RateLimitEndpoint.@Nullable RecentCallersDescriptor recentCallers() {
		return this.recentCallers;
	}

	/** @return the request bodies that would reach callers, the plan with most recent callers first */
	public List<Map<String, Object>> instead() {
		return this.instead;
	}

}

package dev.ratelimit.sample.reactive;

import org.springframework.stereotype.Component;

/**
 * Which plan a user is on, as the sample's account service would say: users
 * whose id starts with {@code pro-} are on pro, everyone else on free. The
 * {@code agent-runs} policy asks it per call ({@code @plans.of(...)}); a caller
 * never chooses its own plan with a header.
 */
@Component("plans")
public class UserPlans {

	/**
	 * Returns a user's plan.
	 * @param user the user id, or {@code null}
	 * @return {@code pro} or {@code free}
	 */
	public String of(String user) {
		return (user != null && user.startsWith("pro-")) ? "pro" : "free";
	}

}

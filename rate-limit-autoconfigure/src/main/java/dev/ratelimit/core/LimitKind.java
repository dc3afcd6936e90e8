package dev.ratelimit.core;

/**
 * The three kinds of limit: a rate limit (calls per time), a budget (money or
 * tokens per window) and a concurrency cap (calls in flight).
 */
public enum LimitKind {

	/** A rate-limit policy, configured under {@code rate-limit.policies}. */
	RATE_LIMIT("rate-limit", "rate-limit.policies"),

	/** A cost budget, configured under {@code rate-limit.budgets}. */
	BUDGET("budget", "rate-limit.budgets"),

	/** A concurrency cap, configured under {@code rate-limit.concurrency}. */
	CONCURRENCY("concurrency", "rate-limit.concurrency");

	private final String label;

	private final String propertyPrefix;

	LimitKind(String label, String propertyPrefix) {
		this.label = label;
		this.propertyPrefix = propertyPrefix;
	}

	/** @return the kind as users read it: {@code rate-limit}, {@code budget} or {@code concurrency} */
	public String label() {
		return this.label;
	}

	/**
	 * Returns where a limit of this kind is configured.
	 * @param name the limit's name
	 * @return the property, such as {@code rate-limit.budgets.tenant-daily}
	 */
	public String property(String name) {
		return this.propertyPrefix + "." + name;
	}

}

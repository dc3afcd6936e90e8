package dev.ratelimit.core;

/**
 * Describes a store's failure for a log line or a health detail: the failure
 * and, when it wraps one, its root cause. A driver's wrapper alone, such as
 * Spring Data Redis' {@code RedisSystemException: Redis exception} or
 * {@code Error in execution}, says nothing an operator can act on; its root
 * cause says {@code Currently not connected}, {@code READONLY ...} or
 * {@code NOPERM ...}.
 */
public final class Causes {

	private Causes() {
	}

	/**
	 * Describes a failure with its root cause.
	 * @param failure the failure
	 * @return {@code failure.toString()}, followed by {@code ", caused by "} and
	 * the root cause when there is one
	 */
	public static String describe(Throwable failure) {
		Throwable root = failure;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		return (root == failure) ? failure.toString() : failure + ", caused by " + root;
	}

}

package dev.ratelimit.core;

/**
 * A named limit of any kind: what every rate-limit policy, budget and
 * concurrency cap has in common, so that the plumbing around them (registry,
 * failure modes, visibility, listeners, reports) is written once.
 */
public interface Limit {

	/** @return the limit's name, unique across every kind */
	String name();

	/** @return the limit's kind */
	LimitKind kind();

	/** @return the key expression: whose limit a call counts against */
	String key();

	/** @return what happens when the limit's store cannot answer */
	FailureMode failureMode();

	/** @return whether the limit is told to callers */
	Visibility visibility();

}

package dev.ratelimit.web;

import java.util.function.Predicate;

/**
 * Writes header fields to the answer of one web stack: a servlet response, a
 * WebFlux response's headers, a gateway's fields. One stateless instance per
 * stack, handed with its target, so that the rules that decide which fields a
 * response carries ({@link RateLimitHeaders}, {@link BudgetHeaders},
 * {@link RefusalFields}) are written once, for every stack, and no call
 * allocates a function to reach its response.
 *
 * @param <T> what the fields are written to
 */
public interface HeaderWriter<T> {

	/**
	 * Sets a field, replacing any of the same name.
	 * @param target the response
	 * @param name the field's name
	 * @param value its value
	 */
	void set(T target, String name, String value);

	/**
	 * Returns whether the response has begun, so that a field set now would not
	 * be sent (a stream's first bytes are out).
	 * @param target the response
	 * @return whether it is too late for fields
	 */
	default boolean committed(T target) {
		return false;
	}

	/**
	 * Returns a writer that also knows when its response has begun.
	 * @param <T> what the fields are written to
	 * @param set sets a field
	 * @param committed tells whether the response has begun
	 * @return the writer
	 */
	static <T> HeaderWriter<T> committable(HeaderWriter<T> set, Predicate<T> committed) {
		return new HeaderWriter<>() {

			@Override
			public void set(T target, String name, String value) {
				set.set(target, name, value);
			}

			@Override
			public boolean committed(T target) {
				return committed.test(target);
			}

		};
	}

}

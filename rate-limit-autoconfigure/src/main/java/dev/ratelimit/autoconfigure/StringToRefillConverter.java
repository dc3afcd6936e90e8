package dev.ratelimit.autoconfigure;

import org.springframework.core.convert.converter.Converter;

import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.Refill;

/**
 * Binds a refill property such as {@code 10/1s} to a {@link Refill}, so that a
 * malformed rate fails binding with the property's name and value.
 */
final class StringToRefillConverter implements Converter<String, Refill> {

	@Override
	public Refill convert(String source) {
		try {
			return Refill.parse(source);
		}
		catch (PolicyValidationException ex) {
			// Without the cause: Boot's failure analysis quotes the deepest cause's message.
			throw new IllegalArgumentException("'" + source + "' is not a refill rate: " + ex.getReason());
		}
	}

}

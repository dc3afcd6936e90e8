package dev.ratelimit.autoconfigure;

import org.springframework.core.convert.converter.Converter;

import dev.ratelimit.budget.Amount;

/**
 * Binds an amount property such as {@code 5.00} to an {@link Amount}, exactly
 * (never through a floating-point number), so that a malformed, negative or too
 * precise amount fails binding with the property's name and value.
 */
final class StringToAmountConverter implements Converter<String, Amount> {

	@Override
	public Amount convert(String source) {
		return Amount.parse(source);
	}

}

package dev.ratelimit.autoconfigure;

import java.math.BigDecimal;

import org.springframework.core.convert.converter.Converter;

import dev.ratelimit.budget.Amount;
import dev.ratelimit.budget.Amounts;

/**
 * Binds an amount that YAML read as a number ({@code amount: 5.00} unquoted is
 * a {@code Double}, {@code amount: 5} an {@code Integer}) to an {@link Amount}.
 * A number's shortest decimal form is taken, so any amount of up to fifteen
 * significant digits is exact; quoting the amount keeps longer ones exact too.
 */
final class NumberToAmountConverter implements Converter<Number, Amount> {

	@Override
	public Amount convert(Number source) {
		BigDecimal value;
		try {
			value = new BigDecimal(source.toString());
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("'" + source + "' is not a decimal amount");
		}
		return new Amount(Amounts.toMicros(value, source));
	}

}

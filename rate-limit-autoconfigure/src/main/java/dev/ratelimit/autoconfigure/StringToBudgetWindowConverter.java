package dev.ratelimit.autoconfigure;

import org.springframework.core.convert.converter.Converter;

import dev.ratelimit.budget.BudgetWindow;

/**
 * Binds a budget window property ({@code day}, {@code week}, {@code month} or a
 * rolling duration such as {@code 24h}) to a {@link BudgetWindow}, so that an
 * unknown window fails binding with the property's name and value.
 */
final class StringToBudgetWindowConverter implements Converter<String, BudgetWindow> {

	@Override
	public BudgetWindow convert(String source) {
		return BudgetWindow.parse(source);
	}

}

package dev.ratelimit.sample.reactive;

import java.math.BigDecimal;

/**
 * The agent's reply and what it cost.
 *
 * @param text the answer
 * @param usage the provider's usage report
 */
public record Reply(String text, Usage usage) {

	/**
	 * Tokens used and their price.
	 *
	 * @param tokens tokens used
	 * @param costUsd their cost in US dollars
	 */
	public record Usage(int tokens, BigDecimal costUsd) {
	}

}

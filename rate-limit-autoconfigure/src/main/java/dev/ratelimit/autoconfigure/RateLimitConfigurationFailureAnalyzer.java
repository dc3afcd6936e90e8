package dev.ratelimit.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.ratelimit.core.RateLimitConfigurationException;

/**
 * Reports a {@link RateLimitConfigurationException} as a short description of
 * what is wrong, and where, and the action that fixes it, instead of a stack
 * trace.
 */
class RateLimitConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RateLimitConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, RateLimitConfigurationException cause) {
		return new FailureAnalysis(cause.getMessage(), cause.getAction(), cause);
	}

}

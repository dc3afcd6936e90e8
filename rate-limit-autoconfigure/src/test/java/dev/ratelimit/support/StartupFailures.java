package dev.ratelimit.support;

import java.util.List;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.core.io.support.SpringFactoriesLoader.ArgumentResolver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an application that fails to start reports: the analysis of the first
 * failure analyzer registered in {@code META-INF/spring.factories} (Boot's own
 * and this starter's) that recognises the failure, as Spring Boot picks it.
 */
public final class StartupFailures {

	private StartupFailures() {
	}

	/**
	 * Analyses a context's start-up failure.
	 * @param context a context that failed to start
	 * @return the analysis the application would print
	 */
	public static FailureAnalysis analyze(ApplicationContextAssertProvider<?> context) {
		assertThat(context).hasFailed();
		return analyze(context.getStartupFailure());
	}

	/**
	 * Analyses a start-up failure.
	 * @param failure the failure
	 * @return the analysis the application would print
	 */
	public static FailureAnalysis analyze(Throwable failure) {
		ArgumentResolver arguments = ArgumentResolver.of(BeanFactory.class, new DefaultListableBeanFactory())
			.and(Environment.class, new StandardEnvironment());
		// As Boot does, an analyzer whose library is missing (Bean Validation here) is left out.
		List<FailureAnalyzer> analyzers = SpringFactoriesLoader
			.forDefaultResourceLocation(StartupFailures.class.getClassLoader())
			.load(FailureAnalyzer.class, arguments, (factoryType, implementationName, missing) -> {
			});
		for (FailureAnalyzer analyzer : analyzers) {
			FailureAnalysis analysis = analyzer.analyze(failure);
			if (analysis != null) {
				return analysis;
			}
		}
		throw new AssertionError("No failure analyzer recognises " + failure, failure);
	}

}

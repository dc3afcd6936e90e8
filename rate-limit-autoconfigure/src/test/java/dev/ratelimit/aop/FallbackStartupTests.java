package dev.ratelimit.aop;

import java.io.IOException;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.support.StartupFailures;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fallback that does not fit its method stops the application at start-up,
 * with a message naming the method, the fallback and the signatures that
 * would fit.
 */
class FallbackStartupTests {

	private static final String FITS = "Declare it in " + FallbackStartupTests.class.getName() + "$%s as "
			+ "String later(String user) or String later(String user, RateLimitException refusal)";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("rate-limit.policies.runs.capacity=1", "rate-limit.policies.runs.refill=1/1h",
				"rate-limit.budgets.spend.amount=1.00", "rate-limit.concurrency.single.permits=1");

	@Test
	void aMissingFallbackFailsNamingTheMethodAndWhatWouldFit() {
		this.contextRunner.withBean(Missing.class).run((context) -> {
			FailureAnalysis analysis = StartupFailures.analyze(context);
			assertThat(analysis.getDescription()).isEqualTo("Method " + Missing.class.getName()
					+ ".run() is annotated @RateLimited: its fallback 'later' does not exist: "
					+ Missing.class.getName() + " has no method named 'later'");
			assertThat(analysis.getAction()).startsWith(FITS.formatted("Missing"));
		});
	}

	@Test
	void aFallbackWithTheWrongParametersFails() {
		this.contextRunner.withBean(WrongParameters.class).run((context) -> {
			FailureAnalysis analysis = StartupFailures.analyze(context);
			assertThat(analysis.getDescription()).contains(WrongParameters.class.getName() + ".run()")
				.contains("its fallback 'later' does not fit: String later() takes 0 parameters, not 1 (the "
						+ "method's) or 2 (the method's and the refusal); String later(int) cannot take argument 1 "
						+ "(String) in its parameter int");
			assertThat(analysis.getAction()).startsWith(FITS.formatted("WrongParameters"));
		});
	}

	@Test
	void aFallbackWhoseRefusalParameterCannotTakeARefusalFails() {
		this.contextRunner.withBean(WrongRefusal.class)
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("String later(String, IOException) cannot receive a refusal in its last parameter "
						+ "IOException (a refusal is a RateLimitException)"));
	}

	@Test
	void aFallbackWithTheWrongReturnTypeFails() {
		this.contextRunner.withBean(WrongReturnType.class)
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains(WrongReturnType.class.getName() + ".run() is annotated @Concurrency: its fallback 'later' "
						+ "does not fit: Integer later(String) returns Integer, which the method cannot return (it "
						+ "returns String)"));
	}

	@Test
	void aFallbackReturningAValueForAVoidMethodFails() {
		this.contextRunner.withBean(VoidMethod.class)
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("String skip(String) returns String, which the method cannot return (it returns void)"));
	}

	@Test
	void aFallbackReturningAWrapperForAPrimitiveFails() {
		// A null Integer would fail to unbox in the proxy, far from the fallback that returned it.
		this.contextRunner.withBean(PrimitiveMethod.class)
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("Integer zero(String) returns Integer, which the method cannot return (it returns int)"));
	}

	@Test
	void twoAnnotationsNamingDifferentFallbacksFail() {
		this.contextRunner.withBean(TwoFallbacks.class).run((context) -> {
			FailureAnalysis analysis = StartupFailures.analyze(context);
			assertThat(analysis.getDescription()).isEqualTo("Method " + TwoFallbacks.class.getName()
					+ ".run() is annotated @CostBudget: it names fallback 'cheaper', but @RateLimited names "
					+ "fallback 'later': a method has one fallback, for the refusals of all its limits");
			assertThat(analysis.getAction())
				.isEqualTo("Name the same fallback on each annotation of the method, or on one of them only.");
		});
	}

	@Test
	void ambiguousOverloadsFail() {
		this.contextRunner.withBean(Ambiguous.class)
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("its fallback 'later' is ambiguous: String later(Object, String), String later(String, "
						+ "Object) all fit and none is more specific than the others"));
	}

	@Test
	void aMethodCannotBeItsOwnFallback() {
		this.contextRunner.withBean(Itself.class)
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("its fallback 'run' does not fit: String run(String) is the annotated method itself"));
	}

	@Test
	void fittingFallbacksOfEveryKindStart() {
		this.contextRunner.withUserConfiguration(Fitting.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	static class Missing {

		@RateLimited(value = "runs", fallback = "later")
		public String run(String user) {
			return "ran";
		}

	}

	static class WrongParameters {

		@RateLimited(value = "runs", fallback = "later")
		public String run(String user) {
			return "ran";
		}

		String later(int user) {
			return "later";
		}

		String later() {
			return "later";
		}

	}

	static class WrongRefusal {

		@CostBudget(value = "spend", estimate = "0.10", fallback = "later")
		public String run(String user) {
			return "ran";
		}

		String later(String user, IOException refusal) {
			return "later";
		}

	}

	static class WrongReturnType {

		@Concurrency(value = "single", fallback = "later")
		public String run(String user) {
			return "ran";
		}

		Integer later(String user) {
			return 0;
		}

	}

	static class VoidMethod {

		@RateLimited(value = "runs", fallback = "skip")
		public void run(String user) {
		}

		String skip(String user) {
			return "skipped";
		}

	}

	static class PrimitiveMethod {

		@RateLimited(value = "runs", fallback = "zero")
		public int count(String user) {
			return 1;
		}

		Integer zero(String user) {
			return 0;
		}

	}

	static class TwoFallbacks {

		@RateLimited(value = "runs", fallback = "later")
		@CostBudget(value = "spend", estimate = "0.10", fallback = "cheaper")
		public String run(String user) {
			return "ran";
		}

		String later(String user) {
			return "later";
		}

		String cheaper(String user) {
			return "cheaper";
		}

	}

	static class Ambiguous {

		@RateLimited(value = "runs", fallback = "later")
		public String run(String user, String task) {
			return "ran";
		}

		String later(String user, Object task) {
			return "later";
		}

		String later(Object user, String task) {
			return "later";
		}

	}

	static class Itself {

		@RateLimited(value = "runs", fallback = "run")
		public String run(String user) {
			return "ran";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Fitting {

		@Bean
		FittingService fittingService() {
			return new FittingService();
		}

	}

	static class FittingService {

		@RateLimited(value = "runs", fallback = "later")
		@CostBudget(value = "spend", estimate = "0.10", fallback = "later")
		@Concurrency(value = "single", fallback = "later")
		public CharSequence run(String user) {
			return "ran";
		}

		private static String later(Object user, Exception refusal) {
			return "later";
		}

		@RateLimited(value = "runs", fallback = "nothing")
		public void run() {
		}

		void nothing() {
		}

	}

}

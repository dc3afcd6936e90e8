package dev.ratelimit;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.RateLimitExceededException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The programmatic API in one line per kind: acquire a named rate limit, reserve
 * and settle a named budget, take a named permit.
 */
class LimitsTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("rate-limit.policies.agent-runs.capacity=2", "rate-limit.policies.agent-runs.refill=2/1h",
				"rate-limit.budgets.tenant-daily.amount=1.00", "rate-limit.concurrency.provider.permits=1");

	@Test
	void aNamedRateLimitIsAcquiredInOneLine() {
		this.contextRunner.run((context) -> {
			Limits limits = context.getBean(Limits.class);
			limits.acquire("agent-runs", "ann");
			assertThat(limits.tryAcquire("agent-runs", "ann", 1).allowed()).isTrue();
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> limits.acquire("agent-runs", "ann"));
			assertThat(limits.tryAcquire("agent-runs", "bob", 2).allowed()).isTrue();
		});
	}

	@Test
	void aNamedBudgetIsReservedAndSettledInOneLineEach() {
		this.contextRunner.run((context) -> {
			Limits limits = context.getBean(Limits.class);
			Reservation reservation = limits.reserve("tenant-daily", "acme", "0.60");
			reservation.settle(250_000);
			assertThat(limits.remaining("tenant-daily", "acme").spentMicros()).containsExactly(250_000);
			limits.reserve("tenant-daily", "acme", "0.75").release();
			assertThatExceptionOfType(BudgetExceededException.class)
				.isThrownBy(() -> limits.reserve("tenant-daily", "acme", "0.80"));
		});
	}

	@Test
	void aNamedPermitIsTakenInOneLine() {
		this.contextRunner.run((context) -> {
			Limits limits = context.getBean(Limits.class);
			try (Permit permit = limits.permit("provider", null)) {
				assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
					.isThrownBy(() -> limits.permit("provider", null));
			}
			limits.permit("provider", null).release();
		});
	}

	/**
	 * A limit whose key is {@code global} (the default) has one pool: the API's
	 * {@code null} key and the annotations' calls count against the same one,
	 * for every kind, or a limit used both ways would allow twice its size.
	 */
	@Test
	void withTheDefaultKeyTheApisNullKeyAndTheAnnotationsShareOnePool() {
		this.contextRunner.withBean(Guarded.class).run((context) -> {
			Limits limits = context.getBean(Limits.class);
			Guarded guarded = context.getBean(Guarded.class);
			guarded.capped(() -> assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
				.isThrownBy(() -> limits.permit("provider", null)));
			guarded.limited();
			guarded.limited();
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> limits.acquire("agent-runs", null));
			limits.reserve("tenant-daily", null, "0.60").settle(600_000);
			assertThatExceptionOfType(BudgetExceededException.class).isThrownBy(() -> guarded.charged());
		});
	}

	@Test
	void anUnknownNameIsAProgrammingErrorNamingWhatIsConfigured() {
		this.contextRunner.run((context) -> {
			Limits limits = context.getBean(Limits.class);
			assertThatIllegalArgumentException().isThrownBy(() -> limits.acquire("agent-run", "ann"))
				.withMessageContaining("rate-limit named 'agent-run'")
				.withMessageContaining("[agent-runs]");
			assertThatIllegalArgumentException().isThrownBy(() -> limits.permit("tenant-daily", null))
				.withMessageContaining("concurrency named 'tenant-daily'");
		});
	}

	/** Uses each limit with its default key, {@code global}. */
	static class Guarded {

		@Concurrency("provider")
		void capped(Runnable whileHeld) {
			whileHeld.run();
		}

		@RateLimited("agent-runs")
		void limited() {
		}

		@CostBudget(value = "tenant-daily", estimate = "0.60")
		void charged() {
		}

	}

}

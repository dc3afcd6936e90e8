package dev.ratelimit.aop;

import java.math.BigDecimal;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.CostBudget;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetMeter;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.budget.InMemoryBudgetStore;
import dev.ratelimit.budget.MeteredFlux;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.key.KeyContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A {@link Flux} of tokens reporting each through its call's
 * {@link BudgetMeter} is settled with what it reported when it completes, is
 * cancelled or is stopped at its reservation, and a failed one by the on-error
 * rule with its reported usage at least; a Flux that reports nothing is
 * settled by the {@code actual} expression over its last element. A token
 * costs 2 micro-units and the estimate is 5 tokens.
 */
class StreamingBudgetFluxTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withUserConfiguration(Services.class)
		.withPropertyValues("rate-limit.budgets.spend.amount=1.00", "rate-limit.budgets.growing.amount=0.000016",
				"rate-limit.budgets.growing.on-overrun=stop");

	@Test
	void completedFluxIsChargedWhatItReported() {
		this.contextRunner.run((context) -> {
			List<String> tokens = model(context).stream(Flux.just("a", "b", "c")).collectList().block();
			assertThat(tokens).containsExactly("a", "b", "c");
			assertSpent(context, "spend", 6);
		});
	}

	@Test
	void fluxPastItsReservationIsStoppedAtIt() {
		this.contextRunner.run((context) -> {
			List<String> tokens = model(context).stream(Flux.just("1", "2", "3", "4", "5", "6", "7"))
				.collectList()
				.block();
			assertThat(tokens).containsExactly("1", "2", "3", "4", "5");
			assertSpent(context, "spend", 10);
		});
	}

	@Test
	void fluxThatExtendsByAnnotationGrowsWhileTheBudgetAllowsAndStopsWhenNot() {
		this.contextRunner.run((context) -> {
			// The budget stops by configuration; the annotation extends: 8 tokens fit in 16 micro-units.
			List<String> tokens = model(context).extending(Flux.range(1, 20).map(String::valueOf))
				.collectList()
				.block();
			assertThat(tokens).hasSize(8);
			assertSpent(context, "growing", 16);
			assertThat(state(context, "growing").remainingMicros()).containsExactly(0);
		});
	}

	@Test
	void meteredFluxReportsEachElementBeforePassingItAndCompletesAtItsReservation() {
		this.contextRunner.run((context) -> {
			List<String> tokens = model(context).metered(Flux.just("1", "2", "3", "4", "5", "6", "7"))
				.collectList()
				.block();
			assertThat(tokens).containsExactly("1", "2", "3", "4", "5");
			assertSpent(context, "spend", 10);
		});
	}

	@Test
	void meteredFluxExtendsOffTheEventLoopAndReportsWithinTheReservationOnIt() {
		this.contextRunner.withUserConfiguration(RecordingStore.class).run((context) -> {
			ExtensionThreads threads = context.getBean(ExtensionThreads.class);
			Scheduler loop = Schedulers.newParallel("loop", 1);
			try {
				// Tokens arrive on a non-blocking thread, as a WebClient's body does on an event loop.
				List<String> tokens = model(context)
					.meteredExtending(Flux.range(1, 20).map(String::valueOf).publishOn(loop))
					.collectList()
					.block();
				assertThat(tokens).hasSize(8);
				assertSpent(context, "growing", 16);
				assertThat(threads.nonBlocking).as("extensions asked the store on an event loop").isZero();
				assertThat(threads.blocking).isPositive();
			}
			finally {
				loop.dispose();
			}
		});
	}

	@Test
	void cancelledMeteredFluxIsChargedWhatItReportedUntilThen() {
		this.contextRunner.run((context) -> {
			Sinks.Many<String> upstream = Sinks.many().unicast().onBackpressureBuffer();
			Disposable subscription = model(context).metered(upstream.asFlux()).subscribe();
			upstream.tryEmitNext("a");
			upstream.tryEmitNext("b");
			subscription.dispose();
			assertSpent(context, "spend", 4);
		});
	}

	@Test
	void cancelledFluxIsChargedWhatItReportedUntilThen() {
		this.contextRunner.run((context) -> {
			Sinks.Many<String> upstream = Sinks.many().unicast().onBackpressureBuffer();
			Disposable subscription = model(context).stream(upstream.asFlux()).subscribe();
			upstream.tryEmitNext("a");
			upstream.tryEmitNext("b");
			assertThat(state(context, "spend").reservedMicros()).isEqualTo(10);
			subscription.dispose();
			assertSpent(context, "spend", 4);
		});
	}

	@Test
	void failedFluxFollowsTheOnErrorRuleWithItsReportedUsageAtLeast() {
		this.contextRunner.run((context) -> {
			Flux<String> failing = Flux.just("a", "b").concatWith(Flux.error(new IllegalStateException("down")));
			model(context).stream(failing).onErrorComplete().blockLast();
			// keep: the reservation, which is more than the 4 reported.
			assertSpent(context, "spend", 10);
		});
	}

	@Test
	void fluxThatReportsNothingIsChargedTheActualCostOfItsLastElement() {
		this.contextRunner.run((context) -> {
			model(context).withFinalUsage(Flux.just(new Chunk("a", null), new Chunk("b", new BigDecimal("0.000007"))))
				.blockLast();
			assertSpent(context, "spend", 7);
		});
	}

	@Test
	void meterIsOnlyCurrentInTheBodyOfABudgetedMethod() {
		assertThatIllegalStateException().isThrownBy(BudgetMeter::current).withMessageContaining("@CostBudget");
	}

	private static Model model(ApplicationContext context) {
		return context.getBean(Model.class);
	}

	private static void assertSpent(ApplicationContext context, String budget, long spentMicros) {
		BudgetDecision state = state(context, budget);
		assertThat(state.spentMicros()).containsExactly(spentMicros);
		assertThat(state.reservedMicros()).isZero();
	}

	private static BudgetDecision state(ApplicationContext context, String budget) {
		return context.getBean(CostBudgets.class)
			.remaining(context.getBean(LimitRegistry.class).budgets().find(budget).orElseThrow(), KeyContext.GLOBAL);
	}

	@Configuration(proxyBeanMethods = false)
	static class Services {

		@Bean
		Model model() {
			return new Model();
		}

	}

	/** Where the store was asked to extend a reservation: on a thread that may block, or on one that must not. */
	static class ExtensionThreads {

		volatile int blocking;

		volatile int nonBlocking;

	}

	/** The in-memory store, recording the threads extensions come on. */
	@Configuration(proxyBeanMethods = false)
	static class RecordingStore {

		@Bean
		ExtensionThreads extensionThreads() {
			return new ExtensionThreads();
		}

		@Bean
		BudgetStore recordingBudgetStore(ExtensionThreads threads) {
			InMemoryBudgetStore memory = new InMemoryBudgetStore(TimeSource.system(), 1_000);
			return new BudgetStore() {

				@Override
				public BudgetDecision reserve(BudgetPolicy policy, String key, String id, long estimateMicros) {
					return memory.reserve(policy, key, id, estimateMicros);
				}

				@Override
				public BudgetDecision extend(BudgetPolicy policy, String key, String id, long moreMicros) {
					if (Schedulers.isInNonBlockingThread()) {
						threads.nonBlocking++;
					}
					else {
						threads.blocking++;
					}
					return memory.extend(policy, key, id, moreMicros);
				}

				@Override
				public BudgetDecision settle(BudgetPolicy policy, String key, String id, long actualMicros) {
					return memory.settle(policy, key, id, actualMicros);
				}

				@Override
				public BudgetDecision release(BudgetPolicy policy, String key, String id) {
					return memory.release(policy, key, id);
				}

				@Override
				public BudgetDecision peek(BudgetPolicy policy, String key) {
					return memory.peek(policy, key);
				}

			};
		}

	}

	record Chunk(String text, BigDecimal costUsd) {
	}

	static class Model {

		@CostBudget(value = "spend", estimate = "0.00001")
		public Flux<String> stream(Flux<String> tokens) {
			BudgetMeter meter = BudgetMeter.current();
			return tokens.takeWhile((token) -> meter.add("0.000002"));
		}

		@CostBudget(value = "growing", estimate = "0.00001", onOverrun = "extend")
		public Flux<String> extending(Flux<String> tokens) {
			BudgetMeter meter = BudgetMeter.current();
			return tokens.takeWhile((token) -> meter.addMicros(2));
		}

		@CostBudget(value = "spend", estimate = "0.00001")
		public Flux<String> metered(Flux<String> tokens) {
			return MeteredFlux.metered(tokens, BudgetMeter.current(), (token) -> new BigDecimal("0.000002"));
		}

		@CostBudget(value = "growing", estimate = "0.00001", onOverrun = "extend")
		public Flux<String> meteredExtending(Flux<String> tokens) {
			return MeteredFlux.meteredMicros(tokens, BudgetMeter.current(), (token) -> 2);
		}

		@CostBudget(value = "spend", estimate = "0.00001", actual = "#result.costUsd")
		public Flux<Chunk> withFinalUsage(Flux<Chunk> chunks) {
			return chunks;
		}

	}

}

package dev.ratelimit.web.contract;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;
import dev.ratelimit.support.HeldCalls;

/**
 * The conformance scenarios' WebFlux application: the route scenarios'
 * endpoints, limited by route rules, and an annotated handler of each style
 * (returning {@code Mono}, {@code Flux} or a plain value) for each annotation
 * scenario.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfigurationWithoutSecurity
public class ReactiveContractApp {

	/** The route scenarios' endpoints. */
	@RestController
	static class Routes {

		@GetMapping("/r/{scenario}/ok")
		public Mono<String> ok() {
			return Mono.just("ok");
		}

		@GetMapping("/r/outcome/fail")
		public Mono<ResponseEntity<String>> fail() {
			return Mono.just(ResponseEntity.status(500).body("failed"));
		}

		@GetMapping("/r/outcome/thrown")
		public Mono<String> thrown() {
			return Mono.error(new ResponseStatusException(HttpStatus.UNAUTHORIZED));
		}

		@GetMapping("/r/{scenario}/hold")
		public Mono<String> hold(@RequestParam String id) {
			return Mono.fromFuture(() -> HeldCalls.enter(id));
		}

	}

	/** Annotated handlers returning {@code Mono}. */
	@RestController
	static class MonoHandlers {

		@RateLimited("a-contract")
		@GetMapping("/a/mono/contract")
		public Mono<String> contract() {
			return Mono.just("ok");
		}

		@RateLimited("a-hidden")
		@GetMapping("/a/mono/hidden")
		public Mono<String> hidden() {
			return Mono.just("ok");
		}

		@RateLimited("a-missing")
		@GetMapping("/a/mono/missing")
		public Mono<String> missing() {
			return Mono.just("ok");
		}

		@RateLimited(value = "a-outcome", countWhen = "#exception != null")
		@GetMapping("/a/mono/outcome")
		public Mono<String> outcome(@RequestParam(defaultValue = "false") boolean fail) {
			return fail ? Mono.error(new IllegalStateException("failed")) : Mono.just("ok");
		}

		@CostBudget(value = "a-budget", estimate = "0.40")
		@GetMapping("/a/mono/budget")
		public Mono<String> budget() {
			return Mono.just("ok");
		}

		@CostBudget(value = "a-budget", estimate = "0.40", actual = "0.10")
		@GetMapping("/a/mono/settled-budget")
		public Mono<String> settledBudget() {
			// Ends on another thread than the one the call was made on, as a WebClient's answer does.
			return Mono.fromCallable(() -> "ok").subscribeOn(Schedulers.parallel());
		}

		@Concurrency("a-cap")
		@GetMapping("/a/mono/cap")
		public Mono<String> cap(@RequestParam(required = false) String id) {
			return (id != null) ? Mono.fromFuture(() -> HeldCalls.enter(id)) : Mono.just("ok");
		}

	}

	/** Annotated handlers returning {@code Flux}. */
	@RestController
	static class FluxHandlers {

		@RateLimited("a-contract")
		@GetMapping("/a/flux/contract")
		public Flux<String> contract() {
			return Flux.just("o", "k");
		}

		@RateLimited("a-hidden")
		@GetMapping("/a/flux/hidden")
		public Flux<String> hidden() {
			return Flux.just("o", "k");
		}

		@RateLimited("a-missing")
		@GetMapping("/a/flux/missing")
		public Flux<String> missing() {
			return Flux.just("o", "k");
		}

		@RateLimited(value = "a-outcome", countWhen = "#exception != null")
		@GetMapping("/a/flux/outcome")
		public Flux<String> outcome(@RequestParam(defaultValue = "false") boolean fail) {
			return fail ? Flux.error(new IllegalStateException("failed")) : Flux.just("o", "k");
		}

		@CostBudget(value = "a-budget", estimate = "0.40")
		@GetMapping("/a/flux/budget")
		public Flux<String> budget() {
			return Flux.just("o", "k");
		}

		@CostBudget(value = "a-budget", estimate = "0.40", actual = "0.10")
		@GetMapping("/a/flux/settled-budget")
		public Flux<String> settledBudget() {
			return Flux.just("o", "k").subscribeOn(Schedulers.parallel());
		}

		@Concurrency("a-cap")
		@GetMapping("/a/flux/cap")
		public Flux<String> cap(@RequestParam(required = false) String id) {
			return (id != null) ? Mono.fromFuture(() -> HeldCalls.enter(id)).flux() : Flux.just("o", "k");
		}

	}

	/** Annotated handlers returning a plain value. */
	@RestController
	static class PlainHandlers {

		@RateLimited("a-contract")
		@GetMapping("/a/plain/contract")
		public String contract() {
			return "ok";
		}

		@RateLimited("a-hidden")
		@GetMapping("/a/plain/hidden")
		public String hidden() {
			return "ok";
		}

		@RateLimited("a-missing")
		@GetMapping("/a/plain/missing")
		public String missing() {
			return "ok";
		}

		@RateLimited(value = "a-outcome", countWhen = "#exception != null")
		@GetMapping("/a/plain/outcome")
		public String outcome(@RequestParam(defaultValue = "false") boolean fail) {
			if (fail) {
				throw new IllegalStateException("failed");
			}
			return "ok";
		}

		@CostBudget(value = "a-budget", estimate = "0.40")
		@GetMapping("/a/plain/budget")
		public String budget() {
			return "ok";
		}

		@CostBudget(value = "a-budget", estimate = "0.40", actual = "0.10")
		@GetMapping("/a/plain/settled-budget")
		public String settledBudget() {
			return "ok";
		}

		@Concurrency("a-cap")
		@GetMapping("/a/plain/cap")
		public String cap() {
			return "ok";
		}

	}

}

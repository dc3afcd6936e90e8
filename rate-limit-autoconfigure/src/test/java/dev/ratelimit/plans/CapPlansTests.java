package dev.ratelimit.plans;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.Limits;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.Quota;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Concurrency caps whose permits differ by key or change while permits are
 * held: a listed key has its own permits, a raise lets more in at once, and a
 * cut lets no one in until the calls in flight fit the new number.
 */
abstract class CapPlansTests {

	@Autowired
	Limits limits;

	@Autowired
	LimitRegistry registry;

	private final List<Permit> held = new ArrayList<>();

	@AfterEach
	void releaseAndRestore() {
		this.held.forEach(Permit::release);
		this.registry.concurrency().live("runs").orElseThrow().removeOverride("");
	}

	@Test
	void listedKeyHasItsOwnPermits() {
		take("someone", 2);
		refused("someone");
		take("partner", 4);
		refused("partner");
	}

	@Test
	void raisedPermitsLetMoreInAndACutLetsNoneInUntilTheCallsFit() {
		take("key-1", 2);
		refused("key-1");
		this.registry.concurrency().live("runs").orElseThrow().override("", new Quota(null, null, null, null, 4));
		take("key-1", 2);
		refused("key-1");
		this.registry.concurrency().live("runs").orElseThrow().override("", new Quota(null, null, null, null, 1));
		// Four in flight against one permit: nobody else until three of them end.
		this.held.remove(0).release();
		this.held.remove(0).release();
		refused("key-1");
		this.held.remove(0).release();
		refused("key-1");
		this.held.remove(0).release();
		take("key-1", 1);
		refused("key-1");
	}

	private void take(String key, int permits) {
		for (int i = 0; i < permits; i++) {
			this.held.add(this.limits.permit("runs", key));
		}
	}

	private void refused(String key) {
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> this.limits.permit("runs", key));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

	}

}

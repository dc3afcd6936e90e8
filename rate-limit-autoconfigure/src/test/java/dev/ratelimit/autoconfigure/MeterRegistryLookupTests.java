package dev.ratelimit.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry is looked up until the context is up, then remembered: found
 * or not, the bean factory is not asked again on every decision.
 */
class MeterRegistryLookupTests {

	private final DefaultListableBeanFactory beans = new DefaultListableBeanFactory();

	private final MeterRegistryLookup lookup = new MeterRegistryLookup(this.beans.getBeanProvider(MeterRegistry.class));

	@Test
	void findsARegistryThatAppearsBeforeTheContextIsUp() {
		assertThat(this.lookup.get()).isNull();
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		this.beans.registerSingleton("registry", registry);
		assertThat(this.lookup.get()).isSameAs(registry);
	}

	@Test
	void remembersThatThereIsNoRegistryOnceSettled() {
		this.lookup.settle();
		this.beans.registerSingleton("late", new SimpleMeterRegistry());
		assertThat(this.lookup.get()).isNull();
	}

	@Test
	void remembersTheRegistryOnceSettled() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		this.beans.registerSingleton("registry", registry);
		this.lookup.settle();
		assertThat(this.lookup.get()).isSameAs(registry);
	}

}

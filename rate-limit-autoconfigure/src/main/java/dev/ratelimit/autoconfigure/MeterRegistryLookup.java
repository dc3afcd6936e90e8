package dev.ratelimit.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;

/**
 * The application's {@link MeterRegistry}, looked up until every singleton
 * exists and remembered from then on (see {@link BeanLookup}).
 */
final class MeterRegistryLookup extends BeanLookup<MeterRegistry> {

	MeterRegistryLookup(ObjectProvider<MeterRegistry> registry) {
		super(registry);
	}

}

package dev.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata IDEs read: generated from the field javadoc of
 * {@link RateLimitProperties} by the configuration processor. A property added
 * without a description fails here.
 */
class ConfigurationMetadataTests {

	@Test
	void everyPropertyHasADescription() throws IOException {
		List<Map<String, Object>> properties = JsonPath.read(metadata(), "$.properties");
		assertThat(properties).extracting((property) -> property.get("name"))
			.contains("rate-limit.backend", "rate-limit.policies", "rate-limit.routes", "rate-limit.budgets",
					"rate-limit.concurrency", "rate-limit.redis.timeout", "rate-limit.headers.mode",
					"rate-limit.redis.prefetch.max-keys", "rate-limit.memory.overflow-slots");
		assertThat(properties).allSatisfy((property) -> assertThat((String) property.get("description"))
			.as("description of %s", property.get("name"))
			.isNotBlank()
			.doesNotStartWith("The ")
			.doesNotStartWith("A "));
	}

	@Test
	void leaseNamesNothing() throws IOException {
		// A token batch is a prefetch, a reservation's lifetime its timeout, a permit's its TTL.
		List<String> names = JsonPath.read(metadata(), "$.properties[*].name");
		List<String> groups = JsonPath.read(metadata(), "$.groups[*].name");
		assertThat(names).noneMatch((name) -> name.contains("lease"));
		assertThat(groups).contains("rate-limit.redis.prefetch").noneMatch((name) -> name.contains("lease"));
	}

	@Test
	void defaultsAreInTheMetadata() throws IOException {
		List<Object> backendDefault = JsonPath.read(metadata(),
				"$.properties[?(@.name == 'rate-limit.backend')].defaultValue");
		assertThat(backendDefault).containsExactly("memory");
		List<Object> timeout = JsonPath.read(metadata(),
				"$.properties[?(@.name == 'rate-limit.redis.timeout')].defaultValue");
		assertThat(timeout).containsExactly("250ms");
		List<Object> overflowSlots = JsonPath.read(metadata(),
				"$.properties[?(@.name == 'rate-limit.memory.overflow-slots')].defaultValue");
		assertThat(overflowSlots).containsExactly(1024);
		List<Object> nearLimit = JsonPath.read(metadata(),
				"$.properties[?(@.name == 'rate-limit.metrics.near-limit')].defaultValue");
		assertThat(nearLimit).containsExactly(80);
	}

	private static String metadata() throws IOException {
		try (InputStream in = ConfigurationMetadataTests.class.getClassLoader()
			.getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
			assertThat(in).as("configuration metadata on the classpath").isNotNull();
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

}

package dev.ratelimit.docs;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import org.springframework.boot.env.PropertiesPropertySourceLoader;
import org.springframework.boot.env.PropertySourceLoader;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every configuration example in the documentation exists in both forms: each
 * {@code yaml} block of README.md and docs/ is followed by a
 * {@code properties} block that sets exactly the same properties to the same
 * values, as Spring Boot reads them.
 */
class ConfigurationExamplesTests {

	/** Maven runs tests in the module directory; the docs are beside it. */
	private static final Path ROOT = Path.of("..");

	private static final Pattern BLOCK = Pattern.compile("```(yaml|properties)\\n(.*?)```\\n", Pattern.DOTALL);

	private static final Pattern LIST_ITEM = Pattern.compile("(.*)\\[(\\d+)]");

	private static final Pattern DECIMAL = Pattern.compile("-?\\d+\\.\\d+");

	@Test
	void everyYamlExampleIsFollowedByTheSamePropertiesExample() throws IOException {
		List<String> checked = new ArrayList<>();
		for (Path document : documents()) {
			String text = Files.readString(document);
			Matcher matcher = BLOCK.matcher(text);
			int end = -1;
			String yaml = null;
			while (matcher.find()) {
				String where = ROOT.relativize(document) + " line " + line(text, matcher.start());
				if (yaml != null) {
					assertThat(matcher.group(1)).as("the block after the yaml block of %s", where)
						.isEqualTo("properties");
					assertThat(text.substring(end, matcher.start())).as("text between the yaml and properties "
							+ "blocks ending at %s", where).isBlank();
					assertThat(load(new PropertiesPropertySourceLoader(), matcher.group(2)))
						.as("the properties block at %s", where)
						.isEqualTo(load(new YamlPropertySourceLoader(), yaml));
					checked.add(where);
					yaml = null;
				}
				else if (matcher.group(1).equals("yaml")) {
					yaml = matcher.group(2);
					end = matcher.end();
				}
			}
			assertThat(yaml).as("a yaml block at the end of %s with no properties block", document).isNull();
		}
		assertThat(checked).hasSizeGreaterThan(10);
	}

	private static List<Path> documents() throws IOException {
		try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
			List<Path> documents = new ArrayList<>(docs
				.filter((path) -> path.toString().endsWith(".md"))
				.sorted()
				.toList());
			documents.add(ROOT.resolve("README.md"));
			return documents;
		}
	}

	/**
	 * The properties as Spring Boot reads them, with a list of values written as
	 * one comma-separated value, as a properties file writes it, and decimals
	 * compared by value: YAML reads {@code 5.00} as the number {@code 5.0}, which
	 * binds to the same amount.
	 */
	private static Map<String, String> load(PropertySourceLoader loader, String content) throws IOException {
		Map<String, String> properties = new TreeMap<>();
		ByteArrayResource resource = new ByteArrayResource(content.getBytes(StandardCharsets.UTF_8));
		for (PropertySource<?> source : loader.load("example", resource)) {
			EnumerablePropertySource<?> enumerable = (EnumerablePropertySource<?>) source;
			for (String name : enumerable.getPropertyNames()) {
				String value = String.valueOf(enumerable.getProperty(name));
				if (DECIMAL.matcher(value).matches()) {
					value = new BigDecimal(value).stripTrailingZeros().toPlainString();
				}
				Matcher item = LIST_ITEM.matcher(name);
				if (item.matches()) {
					properties.merge(item.group(1), value, (a, b) -> a + "," + b);
				}
				else {
					properties.put(name, value);
				}
			}
		}
		return properties;
	}

	private static int line(String text, int offset) {
		return (int) text.substring(0, offset).chars().filter((c) -> c == '\n').count() + 1;
	}

}

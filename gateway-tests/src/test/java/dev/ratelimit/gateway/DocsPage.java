package dev.ratelimit.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads the examples of docs/gateways.md, and the lines of a test's source
 * that the page shows, so that a test runs what the page says.
 */
final class DocsPage {

	/** The page, beside this module (Maven runs tests in the module's directory). */
	static final Path PAGE = Path.of("..", "docs", "gateways.md");

	private DocsPage() {
	}

	/**
	 * Returns the first fenced block of a language after a marker of the page.
	 * @param marker the marker, an HTML comment on the page
	 * @param language the block's language, {@code yaml} or {@code java}
	 * @return the block's text, with its last line's end
	 */
	static String block(String marker, String language) {
		String page = read(PAGE);
		int at = page.indexOf(marker);
		assertThat(at).as("the marker %s in %s", marker, PAGE).isNotNegative();
		Matcher block = Pattern.compile("```" + language + "\\n(.*?)```", Pattern.DOTALL).matcher(page);
		assertThat(block.find(at)).as("a %s block after the marker", language).isTrue();
		return block.group(1);
	}

	/**
	 * Returns the lines of a test's source between {@code // docs: <name>} and
	 * {@code // docs: end}, unindented as the page writes them (four spaces
	 * where the source has a tab).
	 * @param type the test class, top-level
	 * @param name the region's name
	 * @return the lines, each with its end
	 */
	static String region(Class<?> type, String name) {
		Path source = Path.of("src", "test", "java", type.getName().replace('.', '/') + ".java");
		Matcher region = Pattern.compile("\\n(\\t*)// docs: " + name + "\\n(.*?)\\n\\t*// docs: end\\n", Pattern.DOTALL)
			.matcher(read(source));
		assertThat(region.find()).as("the region '%s' in %s", name, source).isTrue();
		String indent = region.group(1);
		StringBuilder text = new StringBuilder();
		for (String line : region.group(2).split("\\n", -1)) {
			String unindented = line.startsWith(indent) ? line.substring(indent.length()) : line;
			text.append(unindented.replace("\t", "    ")).append('\n');
		}
		return text.toString();
	}

	private static String read(Path path) {
		try {
			return Files.readString(path);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}

package dev.ratelimit.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The user documentation (README.md and docs/) describes the product as it is:
 * it names no internal work item a user cannot look up and says nothing is
 * "being built"; and every relative link between the documents, the
 * benchmarks' pages included, leads to a file and, with a fragment, to one of
 * its headings, so that moving a section cannot leave a link behind.
 */
class UserDocsTests {

	/** Maven runs tests in the module directory; the docs are beside it. */
	private static final Path ROOT = Path.of("..");

	/** "issue 28", "Issue 31's", "task 4", "issues 29 and 30": work items no user can look up. */
	private static final Pattern WORK_ITEM = Pattern.compile("(?i)\\b(issues?|tasks?)\\s+#?\\d+");

	/** A page that says something "is being built" describes a plan, not the product. */
	private static final Pattern BEING_BUILT = Pattern.compile("(?i)\\b(is|are)\\s+being\\s+built\\b");

	private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");

	private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");

	private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*]\\(([^)\\s]+)(\\s+\"[^\"]*\")?\\)");

	@Test
	void noUserDocNamesAnInternalWorkItemOrAPlan() throws IOException {
		List<String> found = new ArrayList<>();
		for (Path document : userDocuments()) {
			List<String> lines = Files.readAllLines(document);
			for (int i = 0; i < lines.size(); i++) {
				String line = lines.get(i);
				for (Pattern pattern : List.of(WORK_ITEM, BEING_BUILT)) {
					Matcher matcher = pattern.matcher(line);
					while (matcher.find()) {
						found.add(ROOT.relativize(document) + " line " + (i + 1) + ": \"" + matcher.group() + "\"");
					}
				}
			}
		}
		assertThat(found).as("internal work items or plans named in the user documentation").isEmpty();
	}

	@Test
	void everyRelativeLinkLeadsToAFileAndItsHeading() throws IOException {
		List<Path> documents = new ArrayList<>(userDocuments());
		try (Stream<Path> benchmarks = Files.list(ROOT.resolve("benchmarks"))) {
			benchmarks.filter(UserDocsTests::isMarkdown).sorted().forEach(documents::add);
		}
		Map<Path, Set<String>> anchors = new HashMap<>();
		List<String> broken = new ArrayList<>();
		int checked = 0;
		for (Path document : documents) {
			List<String> lines = outsideCodeBlocks(Files.readAllLines(document));
			for (int i = 0; i < lines.size(); i++) {
				Matcher matcher = LINK.matcher(lines.get(i));
				while (matcher.find()) {
					String target = matcher.group(1);
					if (target.matches("^[a-z]+:.*")) {
						continue;
					}
					checked++;
					int hash = target.indexOf('#');
					String file = (hash < 0) ? target : target.substring(0, hash);
					Path linked = file.isEmpty() ? document : document.getParent().resolve(file).normalize();
					String where = ROOT.relativize(document) + " line " + (i + 1) + ": " + target;
					if (!Files.exists(linked)) {
						broken.add(where + " (no such file)");
					}
					else if (hash >= 0 && isMarkdown(linked)
							&& !anchors.computeIfAbsent(linked, UserDocsTests::anchors).contains(target.substring(hash + 1))) {
						broken.add(where + " (no such heading)");
					}
				}
			}
		}
		assertThat(checked).isGreaterThan(100);
		assertThat(broken).as("links that lead nowhere").isEmpty();
	}

	private static List<Path> userDocuments() throws IOException {
		try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
			List<Path> documents = new ArrayList<>(docs.filter(UserDocsTests::isMarkdown).sorted().toList());
			documents.add(ROOT.resolve("README.md"));
			return documents;
		}
	}

	private static boolean isMarkdown(Path path) {
		return path.toString().endsWith(".md");
	}

	/** The lines as rendered text sees them: a fenced code block's lines are blanked. */
	private static List<String> outsideCodeBlocks(List<String> lines) {
		List<String> text = new ArrayList<>();
		boolean code = false;
		for (String line : lines) {
			if (FENCE.matcher(line).find()) {
				code = !code;
				text.add("");
			}
			else {
				text.add(code ? "" : line);
			}
		}
		return text;
	}

	/**
	 * The fragments GitHub gives a document's headings: the text lower-cased,
	 * punctuation dropped, spaces made hyphens, and a repeated one numbered.
	 */
	private static Set<String> anchors(Path document) {
		Set<String> anchors = new HashSet<>();
		Map<String, Integer> seen = new HashMap<>();
		try {
			for (String line : outsideCodeBlocks(Files.readAllLines(document))) {
				Matcher heading = HEADING.matcher(line);
				if (heading.matches()) {
					String text = heading.group(2).replaceAll("\\[([^\\]]*)]\\([^)]*\\)", "$1");
					String slug = text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
					int repeats = seen.merge(slug, 1, Integer::sum) - 1;
					anchors.add((repeats == 0) ? slug : slug + "-" + repeats);
				}
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		return anchors;
	}

}

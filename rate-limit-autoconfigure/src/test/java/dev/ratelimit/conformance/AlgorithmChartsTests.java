package dev.ratelimit.conformance;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import dev.ratelimit.core.Algorithm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The charts in {@code docs/images} are exactly what {@link AlgorithmCharts}
 * draws from the algorithms as they are now: a change that alters an algorithm's
 * behaviour fails here until the charts are regenerated.
 */
class AlgorithmChartsTests {

	/** Maven runs tests in the module directory; the docs are beside it. */
	private static final Path IMAGES = Path.of(AlgorithmCharts.DEFAULT_DIRECTORY);

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void committedChartIsUpToDate(Algorithm algorithm) throws Exception {
		Path file = IMAGES.resolve(AlgorithmCharts.fileName(algorithm));
		String generated = AlgorithmCharts.svg(algorithm);
		if (!Files.isRegularFile(file)) {
			fail("docs/images/%s is missing. Regenerate the charts from the repository root with:%n%s",
					file.getFileName(), AlgorithmCharts.REGENERATE);
		}
		// Line endings may be rewritten by a checkout; nothing else may differ.
		String committed = Files.readString(file, StandardCharsets.UTF_8).replace("\r\n", "\n");
		if (!committed.equals(generated)) {
			fail("docs/images/%s no longer matches the behaviour of %s (%s). Regenerate the charts from the "
					+ "repository root with:%n%s", file.getFileName(), algorithm, firstDifference(committed, generated),
					AlgorithmCharts.REGENERATE);
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void chartIsWellFormedSvgWithOneMarkPerRequest(Algorithm algorithm) throws Exception {
		String svg = AlgorithmCharts.svg(algorithm);
		assertThat(AlgorithmCharts.svg(algorithm)).as("deterministic").isEqualTo(svg);
		assertThat(svg.getBytes(StandardCharsets.UTF_8).length).isLessThan(40 * 1024);

		Document document = parse(svg);
		Element root = document.getDocumentElement();
		assertThat(root.getLocalName()).isEqualTo("svg");
		assertThat(root.getNamespaceURI()).isEqualTo("http://www.w3.org/2000/svg");

		List<AlgorithmCharts.Request> run = AlgorithmCharts.run(algorithm);
		assertThat(run).hasSize(AlgorithmBehaviourTests.burstPattern().size());
		long admitted = run.stream().filter(AlgorithmCharts.Request::admitted).count();
		assertThat(admitted).isPositive().isLessThan(run.size());
		assertThat(marks(document, "circle", "admitted")).as("admitted marks").isEqualTo(admitted);
		assertThat(marks(document, "path", "rejected")).as("rejected marks").isEqualTo(run.size() - admitted);
		// Every mark lies on the time axis, including the shaping bucket's late starts.
		assertThat(run).allSatisfy((request) -> assertThat(request.startMicros())
			.isLessThanOrEqualTo(AlgorithmCharts.AXIS_END_MILLIS * 1_000L));
		assertThat(svg).contains(AlgorithmCharts.name(algorithm) + ", 10 per second");
	}

	private static Document parse(String svg) throws Exception {
		DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
		factory.setNamespaceAware(true);
		factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
		factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
		DocumentBuilder builder = factory.newDocumentBuilder();
		return builder.parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
	}

	private static long marks(Document document, String element, String cssClass) {
		NodeList nodes = document.getElementsByTagNameNS("http://www.w3.org/2000/svg", element);
		long count = 0;
		for (int i = 0; i < nodes.getLength(); i++) {
			if (cssClass.equals(((Element) nodes.item(i)).getAttribute("class"))) {
				count++;
			}
		}
		return count;
	}

	private static String firstDifference(String committed, String generated) {
		String[] a = committed.split("\n", -1);
		String[] b = generated.split("\n", -1);
		for (int i = 0; i < Math.min(a.length, b.length); i++) {
			if (!a[i].equals(b[i])) {
				return "first difference at line " + (i + 1) + ": committed <" + a[i] + "> but generated <" + b[i]
						+ ">";
			}
		}
		return "committed has " + a.length + " lines, generated " + b.length;
	}

}

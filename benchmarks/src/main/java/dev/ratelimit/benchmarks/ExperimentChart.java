package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A hand-written SVG of one run of {@link AdaptiveCapExperiment} over time:
 * stacked panels sharing the time axis, each with its series, as
 * {@code AlgorithmCharts} draws the algorithm figures (same colours and font).
 */
final class ExperimentChart {

	static final String GREEN = "#2e7d32";

	static final String RED = "#c62828";

	static final String BLUE = "#1565c0";

	static final String GREY = "#666666";

	static final String ORANGE = "#ef6c00";

	private static final int WIDTH = 900;

	private static final int LEFT = 70;

	private static final int RIGHT = 880;

	private static final int PANEL_HEIGHT = 150;

	private static final int GAP = 45;

	private static final int TOP = 50;

	/** One line: its name, colour and a value per point ({@code NaN} for none). */
	record Series(String name, String color, double[] values) {
	}

	/** One panel: a title, its unit, whether its scale is logarithmic, its lines. */
	record Panel(String title, boolean log, List<Series> series) {
	}

	private ExperimentChart() {
	}

	/**
	 * Writes the chart.
	 * @param file where
	 * @param title the chart's title
	 * @param seconds the time of each point, in seconds
	 * @param panels the panels, top to bottom
	 * @param shadeFrom the time the measured window starts (shaded before it)
	 */
	static void write(Path file, String title, double[] seconds, List<Panel> panels, double shadeFrom)
			throws IOException {
		int height = TOP + panels.size() * (PANEL_HEIGHT + GAP) + 10;
		double maxTime = seconds.length == 0 ? 1 : seconds[seconds.length - 1];
		StringBuilder svg = new StringBuilder();
		svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
			.append(height).append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(height)
			.append("\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n");
		svg.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
		svg.append("<text x=\"").append(LEFT).append("\" y=\"22\" font-size=\"15\" font-weight=\"bold\">")
			.append(escape(title)).append("</text>\n");
		int top = TOP;
		for (Panel panel : panels) {
			int bottom = top + PANEL_HEIGHT;
			double max = 0;
			double min = Double.MAX_VALUE;
			for (Series series : panel.series) {
				for (double value : series.values) {
					if (!Double.isNaN(value)) {
						max = Math.max(max, value);
						if (value > 0) {
							min = Math.min(min, value);
						}
					}
				}
			}
			double low;
			double high;
			if (panel.log) {
				low = Math.pow(10, Math.floor(Math.log10((min == Double.MAX_VALUE) ? 1 : min)));
				high = Math.pow(10, Math.ceil(Math.log10(Math.max(max, low * 10))));
			}
			else {
				low = 0;
				high = niceCeiling(Math.max(max, 1));
			}
			double lowValue = low;
			double highValue = high;
			java.util.function.DoubleUnaryOperator y = panel.log
					? (v) -> bottom - (Math.log10(Math.max(v, lowValue)) - Math.log10(lowValue))
							/ (Math.log10(highValue) - Math.log10(lowValue)) * PANEL_HEIGHT
					: (v) -> bottom - v / highValue * PANEL_HEIGHT;
			java.util.function.DoubleUnaryOperator x = (t) -> LEFT + t / maxTime * (RIGHT - LEFT);
			// warm-up shading, title, grid and axes
			svg.append("<rect x=\"").append(LEFT).append("\" y=\"").append(top).append("\" width=\"")
				.append(fmt(x.applyAsDouble(shadeFrom) - LEFT)).append("\" height=\"").append(PANEL_HEIGHT)
				.append("\" fill=\"#f3f3f3\"/>\n");
			svg.append("<text x=\"").append(LEFT).append("\" y=\"").append(top - 8).append("\" font-weight=\"bold\">")
				.append(escape(panel.title)).append("</text>\n");
			List<Double> ticks = new ArrayList<>();
			if (panel.log) {
				for (double t = low; t <= high * 1.0001; t *= 10) {
					ticks.add(t);
				}
			}
			else {
				for (int i = 0; i <= 4; i++) {
					ticks.add(high * i / 4);
				}
			}
			for (double tick : ticks) {
				double ty = y.applyAsDouble(tick);
				svg.append("<line x1=\"").append(LEFT).append("\" x2=\"").append(RIGHT).append("\" y1=\"")
					.append(fmt(ty)).append("\" y2=\"").append(fmt(ty)).append("\" stroke=\"#e0e0e0\"/>\n");
				svg.append("<text x=\"").append(LEFT - 6).append("\" y=\"").append(fmt(ty + 4))
					.append("\" text-anchor=\"end\" fill=\"").append(GREY).append("\">").append(label(tick))
					.append("</text>\n");
			}
			for (int s = 0; s <= (int) maxTime; s += (maxTime > 20) ? 5 : 1) {
				double tx = x.applyAsDouble(s);
				svg.append("<text x=\"").append(fmt(tx)).append("\" y=\"").append(bottom + 14)
					.append("\" text-anchor=\"middle\" fill=\"").append(GREY).append("\">").append(s).append(" s</text>\n");
			}
			svg.append("<line x1=\"").append(LEFT).append("\" x2=\"").append(RIGHT).append("\" y1=\"").append(bottom)
				.append("\" y2=\"").append(bottom).append("\" stroke=\"#9e9e9e\"/>\n");
			// lines and legend
			int legendX = RIGHT;
			for (int s = panel.series.size() - 1; s >= 0; s--) {
				Series series = panel.series.get(s);
				legendX -= 12 + 7 * series.name.length() + 18;
				svg.append("<rect x=\"").append(legendX).append("\" y=\"").append(top - 17)
					.append("\" width=\"12\" height=\"3\" fill=\"").append(series.color).append("\"/>\n");
				svg.append("<text x=\"").append(legendX + 16).append("\" y=\"").append(top - 12).append("\">")
					.append(escape(series.name)).append("</text>\n");
			}
			for (Series series : panel.series) {
				StringBuilder path = new StringBuilder();
				boolean pen = false;
				for (int i = 0; i < Math.min(seconds.length, series.values.length); i++) {
					double v = series.values[i];
					if (Double.isNaN(v) || (panel.log && v <= 0)) {
						pen = false;
						continue;
					}
					path.append(pen ? " L" : " M").append(fmt(x.applyAsDouble(seconds[i]))).append(',')
						.append(fmt(Math.max(top, y.applyAsDouble(v))));
					pen = true;
				}
				if (path.length() > 0) {
					svg.append("<path d=\"").append(path.toString().trim()).append("\" fill=\"none\" stroke=\"")
						.append(series.color).append("\" stroke-width=\"1.6\"/>\n");
				}
			}
			top = bottom + GAP;
		}
		svg.append("</svg>\n");
		Files.createDirectories(file.toAbsolutePath().getParent());
		Files.writeString(file, svg, StandardCharsets.UTF_8);
	}

	private static double niceCeiling(double value) {
		double magnitude = Math.pow(10, Math.floor(Math.log10(value)));
		for (double step : new double[] { 1, 2, 2.5, 5, 10 }) {
			if (step * magnitude >= value) {
				return step * magnitude;
			}
		}
		return 10 * magnitude;
	}

	private static String label(double value) {
		if (value >= 1000 && value % 1000 == 0) {
			return String.format(Locale.ROOT, "%.0fk", value / 1000);
		}
		return (value == Math.rint(value)) ? String.format(Locale.ROOT, "%.0f", value)
				: String.format(Locale.ROOT, "%.1f", value);
	}

	private static String fmt(double value) {
		return String.format(Locale.ROOT, "%.1f", value);
	}

	private static String escape(String text) {
		return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
	}

}

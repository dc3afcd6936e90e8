package dev.ratelimit.insight;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.insight.HeavyHitters.Count;
import dev.ratelimit.insight.HeavyHitters.Snapshot;

/**
 * A {@link Snapshot} as one instance publishes it for the others: one line per key,
 * {@code r} (refusals) or {@code u} (units), count, error and key, separated
 * by tabs. Keys are escaped ({@code %}, tab, CR and LF as {@code %25},
 * {@code %09}, {@code %0D}, {@code %0A}) so that a caller's key cannot break a
 * line; a line that does not read is skipped.
 */
public final class SnapshotText {

	private SnapshotText() {
	}

	/**
	 * Writes a snapshot.
	 * @param snapshot the snapshot
	 * @return its text
	 */
	public static String write(Snapshot snapshot) {
		StringBuilder text = new StringBuilder(64 + 48 * (snapshot.refusals().size() + snapshot.units().size()));
		append(text, 'r', snapshot.refusals());
		append(text, 'u', snapshot.units());
		return text.toString();
	}

	/**
	 * Reads a snapshot.
	 * @param text what {@link #write} wrote
	 * @return the snapshot; its lines that do not read left out
	 */
	public static Snapshot read(String text) {
		String[] lines = text.split("\n");
		List<Count> refusals = new ArrayList<>();
		List<Count> units = new ArrayList<>();
		for (int i = 0; i < lines.length; i++) {
			String[] fields = lines[i].split("\t", 4);
			if (fields.length != 4 || fields[0].length() != 1) {
				continue;
			}
			try {
				Count count = new Count(unescape(fields[3]), Long.parseLong(fields[1]), Long.parseLong(fields[2]));
				(fields[0].charAt(0) == 'r' ? refusals : units).add(count);
			}
			catch (NumberFormatException ex) {
				// a line written by hand, or by a later version: skipped
			}
		}
		return new Snapshot(refusals, units);
	}

	private static void append(StringBuilder text, char type, List<Count> counts) {
		for (Count count : counts) {
			text.append(type).append('\t').append(count.count()).append('\t').append(count.error()).append('\t');
			escape(text, count.key());
			text.append('\n');
		}
	}

	private static void escape(StringBuilder text, String key) {
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			switch (c) {
				case '%' -> text.append("%25");
				case '\t' -> text.append("%09");
				case '\r' -> text.append("%0D");
				case '\n' -> text.append("%0A");
				default -> text.append(c);
			}
		}
	}

	private static String unescape(String key) {
		if (key.indexOf('%') < 0) {
			return key;
		}
		return key.replace("%09", "\t").replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%");
	}

}

package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Reads the {@code for} parameters of one {@code Forwarded} header line
 * (RFC 7239 §4): elements separated by commas, pairs by semicolons, parameter
 * names in any case, values a token or a quoted string with {@code \} escapes.
 * Optional whitespace is allowed around the separators, and an unquoted value
 * may hold {@code :} and brackets, as some proxies write
 * {@code for=[2001:db8::1]:4711} without the quotes RFC 7239 asks for.
 */
final class ForwardedElements {

	/** What an element without a usable {@code for} reads as: not an address. */
	static final String NONE = "";

	private ForwardedElements() {
	}

	/**
	 * Returns the {@code for} value of each element of a header line, in order.
	 * <p>
	 * An element without {@code for}, or with it twice, reads as {@link #NONE}:
	 * the proxy that wrote it did not say who its peer was. A line that breaks
	 * the grammar anywhere reads as {@code null}: a quote opened by the client
	 * could otherwise swallow the elements that trusted proxies appended.
	 * @param line the header line
	 * @return the values, or {@code null} if the line is not valid
	 */
	static @Nullable List<String> forValues(String line) {
		List<String> values = new ArrayList<>();
		int n = line.length();
		int i = 0;
		while (true) {
			String forValue = null;
			boolean repeated = false;
			i = skipWhitespace(line, i);
			while (true) {
				if (i < n && isTokenChar(line.charAt(i))) {
					int nameStart = i;
					while (i < n && isTokenChar(line.charAt(i))) {
						i++;
					}
					if (i == n || line.charAt(i) != '=') {
						return null;
					}
					boolean isFor = i - nameStart == 3 && line.regionMatches(true, nameStart, "for", 0, 3);
					int valueStart = ++i;
					String value;
					if (i < n && line.charAt(i) == '"') {
						i = endOfQuotedString(line, i);
						if (i < 0) {
							return null;
						}
						value = isFor ? unquote(line, valueStart, i) : null;
					}
					else {
						while (i < n && isValueChar(line.charAt(i))) {
							i++;
						}
						if (i == valueStart) {
							return null;
						}
						value = isFor ? line.substring(valueStart, i) : null;
					}
					if (isFor) {
						repeated |= forValue != null;
						forValue = value;
					}
				}
				i = skipWhitespace(line, i);
				if (i < n && line.charAt(i) == ';') {
					i = skipWhitespace(line, i + 1);
					continue;
				}
				break;
			}
			values.add((forValue == null || repeated) ? NONE : forValue);
			if (i == n) {
				return values;
			}
			if (line.charAt(i) != ',') {
				return null;
			}
			i++;
		}
	}

	/**
	 * Returns the index after the quoted string opening at {@code quote}, or -1 if
	 * it is not closed or holds a character RFC 9110 does not allow.
	 */
	private static int endOfQuotedString(String line, int quote) {
		for (int i = quote + 1; i < line.length(); i++) {
			char c = line.charAt(i);
			if (c == '"') {
				return i + 1;
			}
			if (c == '\\') {
				i++;
				if (i == line.length() || !isQuotedPairChar(line.charAt(i))) {
					return -1;
				}
			}
			else if (!isQuotedTextChar(c)) {
				return -1;
			}
		}
		return -1;
	}

	/** The content of a valid quoted string, without its quotes and escapes. */
	private static String unquote(String line, int start, int end) {
		String content = line.substring(start + 1, end - 1);
		if (content.indexOf('\\') < 0) {
			return content;
		}
		StringBuilder unescaped = new StringBuilder(content.length());
		for (int i = 0; i < content.length(); i++) {
			char c = content.charAt(i);
			unescaped.append((c == '\\') ? content.charAt(++i) : c);
		}
		return unescaped.toString();
	}

	private static int skipWhitespace(String line, int i) {
		while (i < line.length() && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
			i++;
		}
		return i;
	}

	/** RFC 9110 {@code tchar}. */
	private static boolean isTokenChar(char c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '!' || c == '#'
				|| c == '$' || c == '%' || c == '&' || c == '\'' || c == '*' || c == '+' || c == '-' || c == '.'
				|| c == '^' || c == '_' || c == '`' || c == '|' || c == '~';
	}

	private static boolean isValueChar(char c) {
		return isTokenChar(c) || c == ':' || c == '[' || c == ']';
	}

	/** RFC 9110 {@code qdtext}: tab, space and visible characters but {@code "} and {@code \}. */
	private static boolean isQuotedTextChar(char c) {
		return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E)
				|| (c >= 0x80 && c <= 0xFF);
	}

	/** RFC 9110 {@code quoted-pair}: a backslash, then tab, space or a visible character. */
	private static boolean isQuotedPairChar(char c) {
		return c == '\t' || c == ' ' || (c >= 0x21 && c <= 0x7E) || (c >= 0x80 && c <= 0xFF);
	}

}

package dev.ratelimit.core;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Builds storage keys of the form {@code prefix:policy:{value}}.
 * <p>
 * The value is the caller's key (an IP, a user id, an API key) and is hostile
 * input, so it is made safe in three ways:
 * <ul>
 * <li>braces, {@code %}, spaces and control characters are percent-encoded, so a
 * value can neither break the Redis Cluster hash tag nor inject a separator, and
 * two different values never collide;</li>
 * <li>a value longer than the configured maximum is replaced by {@code %h} and
 * the Base64url SHA-256 of its encoded form, and the empty value by
 * {@code %e} (forms no encoded value can take);</li>
 * <li>the value sits in a hash tag, so every key of one caller lands in one
 * Redis Cluster slot.</li>
 * </ul>
 */
public final class LimitKeys {

	/** Default for the longest value kept readable before it is hashed. */
	public static final int DEFAULT_MAX_LENGTH = 128;

	private static final char[] HEX = "0123456789ABCDEF".toCharArray();

	private final String prefix;

	private final int maxLength;

	/**
	 * Creates a key builder.
	 * @param prefix the namespace of every key, for example {@code rl}
	 * @param maxLength the longest encoded value kept as is, at least 16
	 */
	public LimitKeys(String prefix, int maxLength) {
		if (prefix == null || prefix.isEmpty() || needsEncoding(prefix)) {
			throw new IllegalArgumentException(
					"key prefix '" + prefix + "' must be non-empty without braces, spaces or control characters");
		}
		if (maxLength < 16) {
			throw new IllegalArgumentException("maximum key length must be at least 16, was " + maxLength);
		}
		this.prefix = prefix;
		this.maxLength = maxLength;
	}

	/**
	 * Returns the storage key of {@code value} under {@code policy}.
	 * @param policy the policy name
	 * @param value the caller's key, not {@code null}
	 * @return {@code prefix:policy:{safe-value}}
	 */
	public String build(String policy, String value) {
		return this.prefix + ':' + policy + ":{" + safeValue(value) + '}';
	}

	/**
	 * Returns the key of the bucket shared by every caller without a key. Its
	 * value {@code %none} is one that no encoded caller key can take.
	 * @param policy the policy name
	 * @return {@code prefix:policy:{%none}}
	 */
	public String sharedKey(String policy) {
		return this.prefix + ':' + policy + ":{%none}";
	}

	/**
	 * Returns the encoded, length-bounded form of a caller's key.
	 * @param value the raw value
	 * @return the value as it appears inside the hash tag
	 */
	public String safeValue(String value) {
		if (value.isEmpty()) {
			// An empty hash tag would make Redis Cluster hash the whole key.
			return "%e";
		}
		String encoded = needsEncoding(value) ? encode(value) : value;
		return (encoded.length() <= this.maxLength) ? encoded : hashed(encoded);
	}

	/**
	 * Returns the caller's key a storage key was built from, as the key
	 * expression produced it, for showing to an operator: the inverse of
	 * {@link #build} for every value kept readable. A value too long to keep
	 * stays in its hashed form ({@code %h...}), and the shared bucket of
	 * keyless callers reads {@code %none}.
	 * @param storageKey a key built by {@link #build} or {@link #sharedKey}
	 * @return the caller's value, or {@code storageKey} itself when it is not of that form
	 */
	public static String callerValue(String storageKey) {
		int open = storageKey.lastIndexOf('{');
		if (open < 0 || !storageKey.endsWith("}")) {
			return storageKey;
		}
		String safe = storageKey.substring(open + 1, storageKey.length() - 1);
		if (safe.equals("%e")) {
			return "";
		}
		if (safe.startsWith("%h") || safe.equals("%none") || safe.indexOf('%') < 0) {
			return safe;
		}
		return decode(safe);
	}

	private static String decode(String safe) {
		StringBuilder out = new StringBuilder(safe.length());
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		int i = 0;
		while (i < safe.length()) {
			char c = safe.charAt(i);
			if (c == '%' && i + 6 <= safe.length() && safe.charAt(i + 1) == 'u') {
				flush(bytes, out);
				out.append((char) Integer.parseInt(safe.substring(i + 2, i + 6), 16));
				i += 6;
			}
			else if (c == '%' && i + 3 <= safe.length()) {
				bytes.write(Integer.parseInt(safe.substring(i + 1, i + 3), 16));
				i += 3;
			}
			else {
				flush(bytes, out);
				out.append(c);
				i++;
			}
		}
		flush(bytes, out);
		return out.toString();
	}

	private static void flush(ByteArrayOutputStream bytes, StringBuilder out) {
		if (bytes.size() > 0) {
			out.append(bytes.toString(StandardCharsets.UTF_8));
			bytes.reset();
		}
	}

	private static boolean needsEncoding(String value) {
		for (int i = 0; i < value.length(); i++) {
			if (isReserved(value.charAt(i))) {
				return true;
			}
		}
		return false;
	}

	private static boolean isReserved(char c) {
		return c <= ' ' || c == 0x7F || c == '{' || c == '}' || c == '%' || Character.isISOControl(c)
				|| Character.isSurrogate(c);
	}

	private static String encode(String value) {
		StringBuilder sb = new StringBuilder(value.length() + 16);
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c < 0x80 && !isReserved(c)) {
				sb.append(c);
			}
			else if (Character.isHighSurrogate(c) && i + 1 < value.length()
					&& Character.isLowSurrogate(value.charAt(i + 1))) {
				escapeUtf8(sb, value.substring(i, i + 2));
				i++;
			}
			else if (Character.isSurrogate(c)) {
				// A lone surrogate has no UTF-8 form; getBytes would turn it into '?' and collide.
				sb.append("%u").append(HEX[(c >> 12) & 0xF]).append(HEX[(c >> 8) & 0xF])
					.append(HEX[(c >> 4) & 0xF]).append(HEX[c & 0xF]);
			}
			else {
				// Once a value needs escaping, non-ASCII is escaped too: byte-exact and injective.
				escapeUtf8(sb, String.valueOf(c));
			}
		}
		return sb.toString();
	}

	private static void escapeUtf8(StringBuilder sb, String text) {
		for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
			sb.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
		}
	}

	private static String hashed(String value) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
			return "%h" + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

}

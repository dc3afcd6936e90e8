package dev.ratelimit.core;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ids of reservations and permits: random, as {@link UUID#randomUUID()}'s, but
 * drawn from {@link ThreadLocalRandom} rather than {@code SecureRandom}, which
 * reads the operating system's entropy and may block a thread that must never
 * block (a reactive event loop). An id only has to differ from the others of
 * its key while they live; it guards nothing, so it need not be unguessable.
 */
public final class UniqueIds {

	private UniqueIds() {
	}

	/**
	 * Returns a new id, a version 4 UUID's text.
	 * @return the id
	 */
	public static String next() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		// The version (4) and variant (IETF) bits of a random UUID.
		long high = (random.nextLong() & ~0xF000L) | 0x4000L;
		long low = (random.nextLong() & ~(0xC000L << 48)) | (0x8000L << 48);
		return new UUID(high, low).toString();
	}

}

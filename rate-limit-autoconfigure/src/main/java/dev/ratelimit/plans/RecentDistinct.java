package dev.ratelimit.plans;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

import dev.ratelimit.core.TimeSource;

/**
 * Estimates how many distinct values were seen recently, in fixed memory: a
 * HyperLogLog of 256 registers (a standard error of about 6.5 %, exact in
 * practice for a handful of values, where it counts empty registers instead)
 * per window, with two windows of the given length rotating on the injected
 * clock. The estimate covers the current window and the one before it, so a
 * value seen less than one window ago is always counted, and one seen more
 * than two windows ago never is.
 * <p>
 * {@link #add(int)} is lock-free and allocates nothing: it reads the clock,
 * mixes the hash and raises at most one register with a compare-and-set.
 * Rotation takes a lock once per window. Writers racing a rotation may lose an
 * update or leave one in the wrong window, which an estimate can afford.
 */
public final class RecentDistinct {

	/** Registers per window: 256 bytes' worth of precision, 2 KB of ints for both windows. */
	public static final int REGISTERS = 256;

	private static final VarHandle REGISTER = MethodHandles.arrayElementVarHandle(int[].class);

	/** The bias correction of HyperLogLog for 256 registers. */
	private static final double ALPHA = 0.7213 / (1 + 1.079 / REGISTERS);

	private final TimeSource time;

	private final long windowMicros;

	private volatile int[] current = new int[REGISTERS];

	private volatile int[] previous = new int[REGISTERS];

	private volatile long window;

	/**
	 * Creates an empty estimate.
	 * @param time the clock that moves the windows
	 * @param windowMicros the length of one window, in microseconds
	 */
	public RecentDistinct(TimeSource time, long windowMicros) {
		if (windowMicros <= 0) {
			throw new IllegalArgumentException("windowMicros must be positive: " + windowMicros);
		}
		this.time = time;
		this.windowMicros = windowMicros;
		this.window = time.currentTimeMicros() / windowMicros;
	}

	/**
	 * Counts a value, by its hash code (mixed here: {@code String.hashCode()} is
	 * too regular to index registers with).
	 * @param hash the value's hash code
	 */
	public void add(int hash) {
		int[] registers = registersNow();
		long mixed = mix(hash);
		int index = (int) (mixed >>> 56);
		// The position of the first one bit in the other 56 bits: 1 to 57.
		int rank = Long.numberOfLeadingZeros((mixed << 8) | 0x80L) + 1;
		int seen = (int) REGISTER.getOpaque(registers, index);
		while (rank > seen && !REGISTER.weakCompareAndSet(registers, index, seen, rank)) {
			seen = (int) REGISTER.getVolatile(registers, index);
		}
	}

	/**
	 * Estimates the distinct values seen in this window and the previous one.
	 * @return the estimate, rounded
	 */
	public long estimate() {
		return estimate(registers());
	}

	/**
	 * Returns the registers of this window and the previous one, merged: what
	 * another instance merges with its own (by the larger of each register) to
	 * count the distinct values both saw.
	 * @return a copy of the merged registers, {@value #REGISTERS} of them
	 */
	public byte[] registers() {
		registersNow();
		int[] current = this.current;
		int[] previous = this.previous;
		byte[] merged = new byte[REGISTERS];
		for (int i = 0; i < REGISTERS; i++) {
			merged[i] = (byte) Math.max((int) REGISTER.getVolatile(current, i),
					(int) REGISTER.getVolatile(previous, i));
		}
		return merged;
	}

	/**
	 * Merges registers into others, each the larger of the two.
	 * @param into the registers merged into
	 * @param from the registers merged from; ignored unless {@value #REGISTERS} long
	 */
	public static void merge(byte[] into, byte[] from) {
		if (from.length != REGISTERS || into.length != REGISTERS) {
			return;
		}
		for (int i = 0; i < REGISTERS; i++) {
			into[i] = (byte) Math.max(into[i], from[i]);
		}
	}

	/**
	 * Estimates the distinct values registers have seen.
	 * @param registers {@value #REGISTERS} registers
	 * @return the estimate, rounded
	 */
	public static long estimate(byte[] registers) {
		double sum = 0;
		int empty = 0;
		for (int i = 0; i < REGISTERS; i++) {
			int rank = registers[i];
			sum += Math.scalb(1.0, -rank);
			if (rank == 0) {
				empty++;
			}
		}
		double estimate = ALPHA * REGISTERS * REGISTERS / sum;
		if (estimate <= 2.5 * REGISTERS && empty > 0) {
			// Few values: counting the registers still empty is far more precise (linear counting).
			estimate = REGISTERS * Math.log((double) REGISTERS / empty);
		}
		return Math.round(estimate);
	}

	private int[] registersNow() {
		long window = this.time.currentTimeMicros() / this.windowMicros;
		if (window != this.window) {
			rotate(window);
		}
		return this.current;
	}

	private synchronized void rotate(long window) {
		long last = this.window;
		if (window <= last) {
			// Another thread rotated first, or a clock that went back: keep counting where we are.
			return;
		}
		int[] reused = this.previous;
		Arrays.fill(reused, 0);
		if (window == last + 1) {
			this.previous = this.current;
		}
		else {
			Arrays.fill(this.current, 0);
		}
		this.current = reused;
		this.window = window;
	}

	/** SplitMix64's finalizer: every bit of the hash reaches every bit of the result. */
	private static long mix(int hash) {
		long z = hash * 0x9E3779B97F4A7C15L;
		z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
		z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
		return z ^ (z >>> 31);
	}

}

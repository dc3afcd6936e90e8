package dev.ratelimit.budget;

/**
 * What a metered call (a stream reporting its usage through a
 * {@link BudgetMeter}) does when its usage would pass its reservation.
 */
public enum OnOverrun {

	/**
	 * Stop at the reservation: the usage that would pass it is refused, the call
	 * is charged its whole reservation and must end its stream.
	 */
	STOP,

	/**
	 * Reserve more against the budget, atomically and in chunks of the call's
	 * estimate (or exactly what is missing when a whole chunk does not fit);
	 * stop as {@link #STOP} does once the budget refuses.
	 */
	EXTEND

}

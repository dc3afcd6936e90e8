package dev.ratelimit.insight;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;

import dev.ratelimit.core.AnnouncedOutage;

/**
 * Publishes what this instance counted for the fleet (every
 * {@link FleetShared}), run every few seconds by a background thread. A
 * failure (the backend not answering) is logged once until publishing works
 * again, and the next run tries again: the fleet's answers then lack this
 * instance's counts for a while, and no request waits for it. A failure that
 * is an outage the backend told of already ({@link AnnouncedOutage}) is logged
 * at debug level, and so is the publishing that works again after it.
 */
public final class FleetPublisher implements Runnable {

	private static final Logger logger = System.getLogger(FleetPublisher.class.getName());

	private final List<FleetShared> shared;

	private final FleetExchange exchange;

	private volatile boolean failing;

	/** Whether the failure was an outage the backend told of: its end is told by the backend too. */
	private volatile boolean failingAnnounced;

	/**
	 * Creates the publisher.
	 * @param shared what to publish
	 * @param exchange where to publish it
	 */
	public FleetPublisher(List<FleetShared> shared, FleetExchange exchange) {
		this.shared = List.copyOf(shared);
		this.exchange = exchange;
	}

	@Override
	public void run() {
		try {
			for (FleetShared counts : this.shared) {
				counts.publishTo(this.exchange);
			}
			if (this.failing) {
				this.failing = false;
				logger.log(this.failingAnnounced ? Level.DEBUG : Level.INFO,
						"Publishing this instance's counts for the fleet works again");
			}
		}
		catch (RuntimeException ex) {
			if (!this.failing) {
				this.failing = true;
				this.failingAnnounced = AnnouncedOutage.in(ex);
				logger.log(this.failingAnnounced ? Level.DEBUG : Level.WARNING,
						"Could not publish this instance's counts for the fleet (heavy hitters, recent callers; "
								+ "the fleet's answers lack them until it works again): " + ex);
			}
		}
	}

}

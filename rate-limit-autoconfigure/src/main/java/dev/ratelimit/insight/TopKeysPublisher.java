package dev.ratelimit.insight;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

import dev.ratelimit.core.LimitKind;

/**
 * Publishes this instance's heavy hitters of every limit that decided calls,
 * run every few seconds by a background thread. A failure (the backend not
 * answering) is logged once until publishing works again, and the next run
 * tries again: the fleet's list then lacks this instance's counts for a while,
 * and no request waits for it.
 */
public final class TopKeysPublisher implements Runnable {

	private static final Logger logger = System.getLogger(TopKeysPublisher.class.getName());

	private final HeavyHitters heavyHitters;

	private final TopKeysExchange exchange;

	private volatile boolean failing;

	/**
	 * Creates the publisher.
	 * @param heavyHitters this instance's counts
	 * @param exchange where to publish them
	 */
	public TopKeysPublisher(HeavyHitters heavyHitters, TopKeysExchange exchange) {
		this.heavyHitters = heavyHitters;
		this.exchange = exchange;
	}

	@Override
	public void run() {
		try {
			for (LimitKind kind : LimitKind.values()) {
				for (String name : this.heavyHitters.tracked(kind)) {
					this.heavyHitters.snapshot(kind, name)
						.ifPresent((snapshot) -> this.exchange.publish(kind, name, snapshot));
				}
			}
			if (this.failing) {
				this.failing = false;
				logger.log(Level.INFO, "Publishing heavy hitters works again");
			}
		}
		catch (RuntimeException ex) {
			if (!this.failing) {
				this.failing = true;
				logger.log(Level.WARNING, "Could not publish this instance's heavy hitters (the fleet's top keys "
						+ "lack them until it works again): " + ex);
			}
		}
	}

}

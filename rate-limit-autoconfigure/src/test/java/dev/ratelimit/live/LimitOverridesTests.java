package dev.ratelimit.live;

import java.util.AbstractMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.RedisConnectionFailureException;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.core.Exemption;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LiveLimit;
import dev.ratelimit.core.NamedLimits;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Setting, removing and polling overrides when the store fails or a refresh
 * of the configuration comes in between: the store and this instance never
 * disagree about an override this instance refused, and a failed write
 * changes nothing.
 */
@ExtendWith(OutputCaptureExtension.class)
class LimitOverridesTests {

	private static final RateLimitPolicy TIERED = RateLimitPolicy.builder("tiered")
		.capacity(2)
		.refill("2/1h")
		.key("header('X-User-Id')")
		.build();

	private static final Quota NINE = new Quota(9L, null, null, null, null);

	private final LimitRegistry registry = new LimitRegistry(
			NamedLimits.of(LimitKind.RATE_LIMIT, List.of(withPlans("free", "pro"))),
			NamedLimits.of(LimitKind.BUDGET, List.of()), NamedLimits.of(LimitKind.CONCURRENCY, List.of()));

	private final LiveLimit<RateLimitPolicy> live = this.registry.rateLimits().live("tiered").orElseThrow();

	@Test
	void aWriteTheStoreRefusesChangesNothingHere() {
		FailingStore store = new FailingStore();
		LimitOverrides overrides = new LimitOverrides(this.registry, store);
		overrides.set("tiered", "pro", NINE);

		store.failing = true;
		assertThatExceptionOfType(OverrideStoreException.class)
			.isThrownBy(() -> overrides.set("tiered", "", NINE))
			.withMessageContaining("did not take the override {capacity=9} of rate-limit 'tiered'")
			.withMessageContaining("Redis is down")
			.withMessageContaining("nothing changed");
		assertThatExceptionOfType(OverrideStoreException.class).isThrownBy(() -> overrides.remove("tiered", "pro"))
			.withMessageContaining("did not take the removal of the override of rate-limit 'tiered' plan 'pro'");

		assertThat(this.live.overrides()).containsOnlyKeys("pro");
		assertThat(this.live.current().limit().capacity()).isEqualTo(2);
		assertThat(this.live.current().select("pro", null).capacity()).isEqualTo(9);
	}

	@Test
	void aRefreshDuringTheWriteNeverLeavesTheStoreWithAnOverrideThisInstanceRefused() throws Exception {
		RefreshingStore store = new RefreshingStore(() -> this.live.reconfigure(withPlans("free")));
		LimitOverrides overrides = new LimitOverrides(this.registry, store);

		boolean refused;
		try {
			overrides.set("tiered", "pro", NINE);
			refused = false;
		}
		catch (PolicyValidationException ex) {
			refused = true;
		}
		store.refresh.join();

		if (refused) {
			assertThat(store.load()).as("the store holds an override this instance refused").isEmpty();
		}
		else {
			// Set before the refresh, which then dropped it here as on every instance of the new configuration.
			assertThat(store.load()).containsKey("tiered");
		}
		assertThat(this.live.overrides()).isEmpty();
		assertThat(this.live.current().hasPlan("pro")).isFalse();
	}

	@Test
	void aPollThatARefreshOvertakesLogsTheOverrideNotAStoreOutage(CapturedOutput output) {
		OvertakenStore store = new OvertakenStore(() -> this.live.reconfigure(withPlans("free")));
		LimitOverrides overrides = new LimitOverrides(this.registry, store);
		overrides.poll();

		store.put("tiered", "pro", NINE);
		overrides.poll();

		assertThat(output).doesNotContain("Cannot read the rate limit overrides").doesNotContain("does not answer")
			.contains("The stored overrides {pro={capacity=9}} of rate-limit 'tiered' no longer fit it after a "
					+ "refresh of the configuration");
		assertThat(this.live.overrides()).isEmpty();
	}

	private static LimitDefinition<RateLimitPolicy> withPlans(String... names) {
		Map<String, Quota> plans = new LinkedHashMap<>();
		for (String name : names) {
			plans.put(name, new Quota(2L, Refill.parse("2/1h"), null, null, null));
		}
		return new LimitDefinition<>(TIERED, "header('X-Plan')", "free", plans, Map.of(), Exemption.NONE);
	}

	/** A store that throws what a Redis store throws when Redis is down, when told to. */
	private static final class FailingStore extends ForwardingStore {

		volatile boolean failing;

		@Override
		void check() {
			if (this.failing) {
				throw new RedisConnectionFailureException("Redis is down");
			}
		}

	}

	/** A store whose first write lets a refresh run on another thread, as the refresher's would. */
	private static final class RefreshingStore extends ForwardingStore {

		final Thread refresh;

		RefreshingStore(Runnable refresh) {
			this.refresh = new Thread(refresh, "refresh");
		}

		@Override
		void check() {
			if (this.refresh.getState() == Thread.State.NEW) {
				this.refresh.start();
				// Until it is done, or waits for the write to finish (parked on the live limit's lock): never both.
				while (this.refresh.isAlive() && this.refresh.getState() != Thread.State.WAITING) {
					Thread.onSpinWait();
				}
			}
		}

	}

	private abstract static class ForwardingStore implements OverrideStore {

		private final InMemoryOverrideStore store = new InMemoryOverrideStore();

		abstract void check();

		@Override
		public long version() {
			check();
			return this.store.version();
		}

		@Override
		public Map<String, Map<String, Quota>> load() {
			return this.store.load();
		}

		@Override
		public void put(String limit, String target, Quota quota) {
			check();
			this.store.put(limit, target, quota);
		}

		@Override
		public void remove(String limit, String target) {
			check();
			this.store.remove(limit, target);
		}

		@Override
		public boolean isShared() {
			return true;
		}

	}

	/** A store whose overrides, once it has some, are overtaken by a refresh after they were checked. */
	private static final class OvertakenStore extends ForwardingStore {

		private final Runnable refresh;

		OvertakenStore(Runnable refresh) {
			this.refresh = refresh;
		}

		@Override
		void check() {
		}

		@Override
		public Map<String, Map<String, Quota>> load() {
			Map<String, Map<String, Quota>> stored = super.load();
			// The checks iterate the overrides; the refresh lands once they are done, before they apply.
			stored.replaceAll((limit, quotas) -> new AfterIteration<>(quotas, this.refresh));
			return stored;
		}

	}

	/** A map that runs an action once it has been iterated to its end. */
	private static final class AfterIteration<K, V> extends AbstractMap<K, V> {

		private final Map<K, V> map;

		private Runnable action;

		AfterIteration(Map<K, V> map, Runnable action) {
			this.map = map;
			this.action = action;
		}

		@Override
		public Set<Entry<K, V>> entrySet() {
			return new java.util.AbstractSet<>() {

				@Override
				public Iterator<Entry<K, V>> iterator() {
					Iterator<Entry<K, V>> entries = AfterIteration.this.map.entrySet().iterator();
					return new Iterator<>() {

						@Override
						public boolean hasNext() {
							boolean next = entries.hasNext();
							if (!next && AfterIteration.this.action != null) {
								Runnable action = AfterIteration.this.action;
								AfterIteration.this.action = null;
								action.run();
							}
							return next;
						}

						@Override
						public Entry<K, V> next() {
							return entries.next();
						}

					};
				}

				@Override
				public int size() {
					return AfterIteration.this.map.size();
				}

			};
		}

	}

}

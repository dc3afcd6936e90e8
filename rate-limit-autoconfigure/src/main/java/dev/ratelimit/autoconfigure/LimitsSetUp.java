package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.aop.AnnotatedBeans;
import dev.ratelimit.aop.BoundCap;
import dev.ratelimit.aop.LimitAnnotations;
import dev.ratelimit.aop.MethodLimits;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LiveLimit;
import dev.ratelimit.key.BoundPolicy;

/**
 * The limits an application has set up once it has started: the configured
 * ones, then those annotations define inline, each once, and where each is
 * decided. What its meters are registered at 0 for: a finite list, fixed at
 * start-up (limits added to the configuration apply after a restart).
 */
final class LimitsSetUp {

	private LimitsSetUp() {
	}

	/**
	 * Lists the limits set up.
	 * @param registry the configured limits
	 * @param beans the limited methods of the beans, when annotations are enforced
	 * @param annotations the resolver of their annotations, when they are
	 * @return every limit's definition, configured ones first, each name once per kind
	 */
	static List<LimitDefinition<? extends Limit>> of(LimitRegistry registry, @Nullable AnnotatedBeans beans,
			@Nullable LimitAnnotations annotations) {
		Map<String, LimitDefinition<? extends Limit>> byName = new LinkedHashMap<>();
		List<LiveLimit<? extends Limit>> lives = new ArrayList<>(registry.rateLimits().lives());
		lives.addAll(registry.budgets().lives());
		lives.addAll(registry.concurrency().lives());
		lives.forEach((live) -> add(byName, live.current()));
		if (beans != null && annotations != null) {
			for (AnnotatedBeans.AnnotatedMethod annotated : beans.methods()) {
				if (!annotated.interceptable()) {
					// Not limited there; the start-up report warns about it.
					continue;
				}
				// The interceptor's own resolution, cached: the start-up report resolved it too.
				MethodLimits limits = annotations.resolve(annotated.method(), annotated.beanType());
				for (BoundPolicy bound : limits.rateLimits()) {
					add(byName, bound.applied().definition());
				}
				BoundCap cap = limits.cap();
				if (cap != null) {
					add(byName, cap.applied().definition());
				}
			}
		}
		return List.copyOf(byName.values());
	}

	private static void add(Map<String, LimitDefinition<? extends Limit>> byName,
			LimitDefinition<? extends Limit> definition) {
		Limit limit = definition.limit();
		byName.putIfAbsent(limit.kind().label() + ":" + limit.name(), definition);
	}

	/**
	 * Whether a store outside this process decides a limit, so that its failure
	 * mode may decide its calls.
	 * @param limit the limit
	 * @param remote whether the backend is remote (Redis)
	 * @return whether its store can fail
	 */
	static boolean storeCanFail(Limit limit, boolean remote) {
		return remote
				&& (!(limit instanceof ConcurrencyPolicy cap) || cap.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED);
	}

	/**
	 * Whether an in-memory store may decide a limit's keys: with the memory
	 * backend every limit's, with a remote one the local fallbacks'; a local
	 * cap's always, an adaptive cap's never (it counts calls, not keys).
	 * @param limit the limit
	 * @param remote whether the backend is remote (Redis)
	 * @return whether its keys may be held in memory
	 */
	static boolean decidedInMemory(Limit limit, boolean remote) {
		if (limit instanceof ConcurrencyPolicy cap) {
			return !cap.isAdaptive() && (cap.scope() == ConcurrencyPolicy.Scope.LOCAL
					|| cap.failureMode() == FailureMode.LOCAL);
		}
		return !remote || limit.failureMode() == FailureMode.LOCAL;
	}

}

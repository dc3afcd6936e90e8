package dev.ratelimit.web;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.PolicyDecision;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Writes the rate-limit header fields of a response. Decisions of one request
 * are collected in the request attribute that holds its disclosed limits, so
 * that a route rule (the filter) and an annotation (the aspect) on the same
 * request produce one list of policies.
 * Only the policies registered as disclosed for the request are written (see
 * {@link dev.ratelimit.core.Visibility}): a limit the caller cannot act on,
 * such as a provider's rate shared by every caller, is not advertised.
 * <p>
 * The IETF fields follow draft-ietf-httpapi-ratelimit-headers-11: Structured
 * Field Lists of the policy name as a String with parameters, e.g.
 * {@code RateLimit-Policy: "agent-runs";q=5;w=5} (quota and window in seconds)
 * and {@code RateLimit: "agent-runs";r=3;t=2} (remaining and seconds until the
 * quota is fully restored).
 */
public final class RateLimitHeaders {

	private final HeaderMode mode;

	private final boolean includeShadow;

	private final Map<String, PolicyField> policyFields = new ConcurrentHashMap<>();

	/**
	 * Creates a writer that leaves shadow policies out.
	 * @param mode which fields to write
	 */
	public RateLimitHeaders(HeaderMode mode) {
		this(mode, false);
	}

	/**
	 * Creates a writer.
	 * @param mode which fields to write
	 * @param includeShadow whether shadow policies are listed too
	 */
	public RateLimitHeaders(HeaderMode mode, boolean includeShadow) {
		this.mode = mode;
		this.includeShadow = includeShadow;
	}

	/**
	 * Adds an outcome's decisions to what a request disclosed and sets the
	 * header fields on its response, for every decision of a limit the caller
	 * may see. The decisions are always kept (a later one of the same request
	 * writes them all); the fields are written only while the response has not
	 * begun, on every stack alike.
	 * @param disclosures the request's disclosed limits and decisions
	 * @param target the response
	 * @param writer writes its fields
	 * @param outcome the outcome
	 * @param <T> the response's type
	 */
	<T> void record(Disclosures disclosures, T target, HeaderWriter<T> writer, RateLimitOutcome outcome) {
		if (this.mode == HeaderMode.NONE) {
			return;
		}
		if (collect(disclosures, outcome) && !writer.committed(target)) {
			write(target, writer, disclosures);
		}
	}

	/** Records the disclosed decisions of an outcome; returns whether there was one. */
	private boolean collect(Disclosures disclosures, RateLimitOutcome outcome) {
		boolean changed = false;
		for (int i = 0, enforced = outcome.decisions().size(); i < enforced + shadowCount(outcome); i++) {
			PolicyDecision decision = (i < enforced) ? outcome.decisions().get(i)
					: outcome.shadowDecisions().get(i - enforced);
			if (disclosures.contains(decision.policy().name())) {
				disclosures.record(decision);
				changed = true;
			}
		}
		return changed;
	}

	private int shadowCount(RateLimitOutcome outcome) {
		return this.includeShadow ? outcome.shadowDecisions().size() : 0;
	}

	private <T> void write(T target, HeaderWriter<T> writer, Disclosures decisions) {
		int count = decisions.decisionCount();
		if (this.mode == HeaderMode.IETF || this.mode == HeaderMode.BOTH) {
			if (count == 1) {
				// The common case: one policy, its RateLimit-Policy item ready made.
				PolicyDecision only = decisions.decision(0);
				PolicyField field = policyField(only);
				writer.set(target, "RateLimit-Policy", field.item());
				writer.set(target, "RateLimit", state(field, only.decision()));
			}
			else {
				StringBuilder policy = new StringBuilder();
				StringBuilder state = new StringBuilder();
				for (int i = 0; i < count; i++) {
					PolicyDecision pd = decisions.decision(i);
					PolicyField field = policyField(pd);
					separate(policy).append(field.item());
					separate(state).append(state(field, pd.decision()));
				}
				writer.set(target, "RateLimit-Policy", policy.toString());
				writer.set(target, "RateLimit", state.toString());
			}
		}
		if (this.mode == HeaderMode.LEGACY || this.mode == HeaderMode.BOTH) {
			// One set of numbers only: report the policy closest to denying.
			PolicyDecision tightest = decisions.decision(0);
			for (int i = 1; i < count; i++) {
				PolicyDecision pd = decisions.decision(i);
				if (pd.decision().remaining() < tightest.decision().remaining()) {
					tightest = pd;
				}
			}
			writer.set(target, "X-RateLimit-Limit", Long.toString(tightest.decision().limit()));
			writer.set(target, "X-RateLimit-Remaining", Long.toString(tightest.decision().remaining()));
			writer.set(target, "X-RateLimit-Reset", Long.toString(seconds(tightest.decision().resetAfterMicros())));
		}
	}

	/** {@code "name";r=3;t=2}: what is left and when the quota is whole again. */
	private static String state(PolicyField field, Decision d) {
		return field.quotedName() + ";r=" + d.remaining() + ";t=" + seconds(d.resetAfterMicros());
	}

	/**
	 * The policy's {@code RateLimit-Policy} item, {@code "name";q=5;w=5}: the same
	 * for every decision of one policy variant, so it is made once and kept, by
	 * name, while the variant and its quota stay the same.
	 */
	private PolicyField policyField(PolicyDecision pd) {
		RateLimitPolicy policy = pd.policy();
		long limit = pd.decision().limit();
		PolicyField field = this.policyFields.get(policy.name());
		if (field == null || field.policy() != policy || field.limit() != limit) {
			String quoted = "\"" + policy.name() + "\"";
			field = new PolicyField(policy, limit, quoted, quoted + ";q=" + limit + ";w=" + seconds(policy.windowMicros()));
			// Names are bounded by the configuration; a plan's variants of one name take turns.
			this.policyFields.put(policy.name(), field);
		}
		return field;
	}

	/**
	 * A policy variant's ready-made header parts.
	 *
	 * @param policy the variant, compared by identity
	 * @param limit the quota its decisions report
	 * @param quotedName the name as a Structured Field String
	 * @param item the whole {@code RateLimit-Policy} item
	 */
	private record PolicyField(RateLimitPolicy policy, long limit, String quotedName, String item) {
	}

	private static StringBuilder separate(StringBuilder sb) {
		return sb.isEmpty() ? sb : sb.append(", ");
	}

	/**
	 * Converts microseconds to whole seconds, rounding up so that a client never
	 * comes back too early.
	 * @param micros the duration in microseconds
	 * @return the seconds, rounded up
	 */
	static long seconds(long micros) {
		return -Math.floorDiv(-micros, 1_000_000L);
	}

}

package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.PolicyDecision;

/**
 * What a request's response may tell its caller about its limits: the limits
 * whose {@link dev.ratelimit.core.Visibility} allows it where they were
 * applied to this request, by name, and the decisions made for it so far,
 * which the header fields list. The filter and the aspects register each limit
 * as they apply it; the header fields and the problem bodies show only
 * registered ones, so a limit nobody registered (an internal one, or one
 * applied by code outside them) stays unnamed.
 * <p>
 * Both live in one request attribute ({@link #ATTRIBUTE}), set once per
 * request, which also marks that the servlet route filter is handling the
 * request (so that a nested dispatch of it, a forward or an include, is not
 * limited again): every attribute a request sets is a write to the container's
 * attribute map, and a removal another. Free of any stack: each stack reads
 * and sets the attribute its own way.
 */
public final class Disclosures {

	/** The request attribute that holds them, on every stack. */
	public static final String ATTRIBUTE = Disclosures.class.getName();

	/** The disclosures of a request that registered none: names nothing. Never changed. */
	public static final Disclosures NONE = new Disclosures(null);

	/** The first name registered, or {@code null}: most requests have one limit, and pay for no set. */
	private @Nullable String first;

	private @Nullable Set<String> more;

	/** The only decision recorded, while there is one: most requests have one limit, and pay for no list. */
	private @Nullable PolicyDecision decision;

	/** Every decision recorded, in order, once a second policy's arrives; then {@link #decision} is unused. */
	private @Nullable List<PolicyDecision> decisions;

	/** The budgets' states recorded for the {@code Budget-Remaining} field, by name; created on first use. */
	private @Nullable Map<String, Object[]> budgets;

	/** The route filter handling the request now, or {@code null}. */
	private @Nullable Object filteredBy;

	private Disclosures(@Nullable String first) {
		this.first = first;
	}

	/**
	 * Returns the disclosures held by a request attribute's value.
	 * @param attribute the value of the request's {@link #ATTRIBUTE}, or {@code null}
	 * @return its disclosures, or {@code null} when it has none
	 */
	public static @Nullable Disclosures from(@Nullable Object attribute) {
		return (attribute instanceof Disclosures disclosures) ? disclosures : null;
	}

	/**
	 * Returns new disclosures, to be set as a request's {@link #ATTRIBUTE}.
	 * @param first the first limit to disclose, or {@code null} for none yet
	 * @return the disclosures
	 */
	public static Disclosures create(@Nullable String first) {
		return new Disclosures(first);
	}

	/**
	 * Returns the disclosures kept in a request's attributes, put there first if
	 * there are none: for a request that is not a servlet request (a WebFlux
	 * exchange's attributes).
	 * @param attributes the request's attributes
	 * @return its disclosures
	 */
	static Disclosures attached(Map<String, Object> attributes) {
		Object held = attributes.get(ATTRIBUTE);
		if (held instanceof Disclosures disclosures) {
			return disclosures;
		}
		Disclosures disclosures = new Disclosures(null);
		attributes.put(ATTRIBUTE, disclosures);
		return disclosures;
	}

	/**
	 * Returns the disclosures kept in a request's attributes.
	 * @param attributes the request's attributes
	 * @return its disclosures, or {@code null} when it has none
	 */
	public static @Nullable Disclosures of(Map<String, Object> attributes) {
		return (attributes.get(ATTRIBUTE) instanceof Disclosures disclosures) ? disclosures : null;
	}

	/** @return the route filter handling the request now, or {@code null} */
	public @Nullable Object filteredBy() {
		return this.filteredBy;
	}

	/** @param filter the route filter handling the request from now, or {@code null} once it is done */
	public void filteredBy(@Nullable Object filter) {
		this.filteredBy = filter;
	}

	/**
	 * Allows a limit to be told to the caller of this request.
	 * @param policy the limit's name
	 */
	void add(String policy) {
		if (this.first == null) {
			this.first = policy;
		}
		else if (!this.first.equals(policy)) {
			if (this.more == null) {
				this.more = new HashSet<>(4);
			}
			this.more.add(policy);
		}
	}

	/**
	 * Returns whether a limit may be told to the caller of this request.
	 * @param policy the limit's name
	 * @return whether it was registered as disclosed
	 */
	boolean contains(String policy) {
		return policy.equals(this.first) || (this.more != null && this.more.contains(policy));
	}

	/**
	 * Records a decision of a disclosed limit for the header fields: in place of
	 * an earlier decision of the same policy, else after the others.
	 * @param decision the decision
	 */
	void record(PolicyDecision decision) {
		String name = decision.policy().name();
		if (this.decisions == null) {
			if (this.decision == null || this.decision.policy().name().equals(name)) {
				this.decision = decision;
				return;
			}
			this.decisions = new ArrayList<>(4);
			this.decisions.add(this.decision);
			this.decision = null;
		}
		for (int i = 0; i < this.decisions.size(); i++) {
			if (this.decisions.get(i).policy().name().equals(name)) {
				this.decisions.remove(i);
				break;
			}
		}
		this.decisions.add(decision);
	}

	/** @return the budgets' states recorded for the request, by name, in order */
	Map<String, Object[]> budgets() {
		if (this.budgets == null) {
			this.budgets = new LinkedHashMap<>();
		}
		return this.budgets;
	}

	/** @return how many decisions were recorded, one per policy */
	int decisionCount() {
		if (this.decisions != null) {
			return this.decisions.size();
		}
		return (this.decision != null) ? 1 : 0;
	}

	/**
	 * Returns a recorded decision, in the order the header fields list them.
	 * @param index from 0 to {@link #decisionCount()} (exclusive)
	 * @return the decision
	 */
	PolicyDecision decision(int index) {
		if (this.decisions != null) {
			return this.decisions.get(index);
		}
		if (index != 0 || this.decision == null) {
			throw new IndexOutOfBoundsException(index);
		}
		return this.decision;
	}

}

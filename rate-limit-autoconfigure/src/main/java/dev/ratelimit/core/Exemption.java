package dev.ratelimit.core;

import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * When a limit does not apply to a call: a client address in one of the
 * ranges, a caller in one of the roles, or a condition (an expression over the
 * call, evaluated where the limit is applied) that holds. Any one suffices.
 *
 * @param cidrs the client address ranges, matched against the full client
 * address (the one the {@code ip} key names, before masking)
 * @param roles the roles, as the servlet request's {@code isUserInRole} reads them
 * @param when the condition, or {@code null} for none
 */
public record Exemption(List<CidrRange> cidrs, Set<String> roles, @Nullable String when) {

	/** No call is exempt. */
	public static final Exemption NONE = new Exemption(List.of(), Set.of(), null);

	/**
	 * Creates an exemption.
	 */
	public Exemption {
		cidrs = List.copyOf(cidrs);
		roles = Set.copyOf(roles);
		when = (when == null || when.isBlank()) ? null : when.strip();
	}

	/** @return whether no call can be exempt */
	public boolean isNone() {
		return this.cidrs.isEmpty() && this.roles.isEmpty() && this.when == null;
	}

	/**
	 * Returns whether a client address lies in one of the ranges.
	 * @param address the address, 4 or 16 bytes, or {@code null} when unknown
	 * @return whether it is exempt by address
	 */
	public boolean covers(byte @Nullable [] address) {
		if (address != null) {
			for (CidrRange range : this.cidrs) {
				if (range.contains(address)) {
					return true;
				}
			}
		}
		return false;
	}

}

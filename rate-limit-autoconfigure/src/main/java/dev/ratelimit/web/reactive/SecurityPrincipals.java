package dev.ratelimit.web.reactive;

import java.security.Principal;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;

/**
 * What Spring Security's servlet request wrapper answers about a principal,
 * for a WebFlux request, whose principal is read from the pipeline: an
 * anonymous authentication is no principal, and a role is an authority with
 * Spring Security's default prefix {@code ROLE_}. Only loaded when Spring
 * Security is on the classpath.
 */
final class SecurityPrincipals {

	private static final String ROLE_PREFIX = "ROLE_";

	private SecurityPrincipals() {
	}

	/**
	 * Returns whether a principal stands for an anonymous caller.
	 * @param principal the principal
	 * @return whether it is Spring Security's anonymous authentication
	 */
	static boolean isAnonymous(Principal principal) {
		return principal instanceof AnonymousAuthenticationToken;
	}

	/**
	 * Returns whether a principal has a role, as {@code isUserInRole} answers
	 * on a servlet request: an authority {@code ROLE_<role>}, or the role as
	 * given when it starts with the prefix already.
	 * @param principal the principal
	 * @param role the role
	 * @return whether it has it
	 */
	static boolean hasRole(Principal principal, String role) {
		if (!(principal instanceof Authentication authentication) || role == null) {
			return false;
		}
		String authority = role.startsWith(ROLE_PREFIX) ? role : ROLE_PREFIX + role;
		for (GrantedAuthority granted : authentication.getAuthorities()) {
			if (authority.equals(granted.getAuthority())) {
				return true;
			}
		}
		return false;
	}

}

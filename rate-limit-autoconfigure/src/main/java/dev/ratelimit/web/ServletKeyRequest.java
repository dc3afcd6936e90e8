package dev.ratelimit.web;

import java.security.Principal;
import java.util.Collections;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;

import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.key.KeyRequest;

/**
 * {@link KeyRequest} over a servlet request.
 */
final class ServletKeyRequest implements KeyRequest {

	private final HttpServletRequest request;

	private final ClientIpResolver ipResolver;

	private String clientIp;

	private boolean clientIpResolved;

	ServletKeyRequest(HttpServletRequest request, ClientIpResolver ipResolver) {
		this.request = request;
		this.ipResolver = ipResolver;
	}

	@Override
	public String header(String name) {
		String value = this.request.getHeader(name);
		return (value == null || value.isBlank()) ? null : value;
	}

	@Override
	public String clientIp() {
		if (!this.clientIpResolved) {
			List<String> forwarded = this.ipResolver.readsHeader()
					? Collections.list(this.request.getHeaders(this.ipResolver.header().headerName())) : List.of();
			this.clientIp = this.ipResolver.resolve(this.request.getRemoteAddr(), forwarded);
			this.clientIpResolved = true;
		}
		return this.clientIp;
	}

	@Override
	public byte[] clientAddress() {
		List<String> forwarded = this.ipResolver.readsHeader()
				? Collections.list(this.request.getHeaders(this.ipResolver.header().headerName())) : List.of();
		return this.ipResolver.resolveAddress(this.request.getRemoteAddr(), forwarded);
	}

	@Override
	public boolean isUserInRole(String role) {
		return this.request.isUserInRole(role);
	}

	@Override
	public String principalName() {
		Principal principal = this.request.getUserPrincipal();
		return (principal != null) ? principal.getName() : null;
	}

	@Override
	public Object nativeRequest() {
		return this.request;
	}

}

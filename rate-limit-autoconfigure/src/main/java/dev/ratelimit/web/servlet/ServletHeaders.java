package dev.ratelimit.web.servlet;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.web.Disclosures;
import dev.ratelimit.web.HeaderWriter;

/**
 * Writes header fields to a servlet response while it is not committed: once
 * its body streams, another thread (a settle when an asynchronous call ends)
 * must not touch the headers the container is sending. Also reads and attaches
 * a servlet request's {@link Disclosures}.
 */
final class ServletHeaders {

	/** The servlet stack's writer: one instance, no function allocated per request. */
	static final HeaderWriter<HttpServletResponse> WRITER = HeaderWriter.committable(HttpServletResponse::setHeader,
			HttpServletResponse::isCommitted);

	private ServletHeaders() {
	}

	/**
	 * Returns a servlet request's disclosures.
	 * @param request the request
	 * @return its disclosures, or {@code null} when it has none
	 */
	static @Nullable Disclosures disclosures(HttpServletRequest request) {
		return Disclosures.from(request.getAttribute(Disclosures.ATTRIBUTE));
	}

	/**
	 * Returns a servlet request's disclosures, set as its attribute first if it
	 * has none.
	 * @param request the request
	 * @return its disclosures
	 */
	static Disclosures attachedDisclosures(HttpServletRequest request) {
		Disclosures disclosures = disclosures(request);
		if (disclosures == null) {
			disclosures = Disclosures.create(null);
			attach(request, disclosures);
		}
		return disclosures;
	}

	/**
	 * Attaches disclosures to a servlet request that had none.
	 * @param request the request
	 * @param disclosures the disclosures
	 */
	static void attach(HttpServletRequest request, Disclosures disclosures) {
		request.setAttribute(Disclosures.ATTRIBUTE, disclosures);
	}

}

package dev.ratelimit.web.contract;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.web.contract.WebContractScenarios.Scenario;

/**
 * What the servlet stack cannot offer of the conformance scenarios, and why.
 */
final class ServletStack {

	private ServletStack() {
	}

	static @Nullable String cannot(Scenario scenario, boolean redis) {
		return switch (scenario) {
			case CANCELLATION -> "a servlet container tells the application that its client went away only when the "
					+ "response is written: the call runs to its end, holding its permit, and is settled by its status";
			case FROZEN_REDIS -> redis ? null : "the memory backend has no store to freeze";
			case HELD_ANNOTATED_CALL, ANNOTATED_HANDLER, MANAGEMENT_ENDPOINTS -> null;
		};
	}

}

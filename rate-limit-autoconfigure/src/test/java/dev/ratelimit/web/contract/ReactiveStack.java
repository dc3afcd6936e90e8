package dev.ratelimit.web.contract;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.web.contract.WebContractScenarios.Scenario;

/**
 * What the WebFlux stack cannot offer of the conformance scenarios, and why.
 */
final class ReactiveStack {

	private ReactiveStack() {
	}

	static @Nullable String cannot(Scenario scenario, @Nullable String style, boolean redis) {
		return switch (scenario) {
			case HELD_ANNOTATED_CALL, CANCELLATION -> "plain".equals(style)
					? "a handler returning a plain value runs on an event loop: holding it in flight would block "
							+ "the loop, so its permit is held only while it runs"
					: null;
			case FROZEN_REDIS -> redis ? null : "the memory backend has no store to freeze";
			case ANNOTATED_HANDLER, MANAGEMENT_ENDPOINTS -> null;
		};
	}

}

package dev.ratelimit.gateway.contract;

import org.jspecify.annotations.Nullable;

import org.springframework.test.context.DynamicPropertyRegistry;

import dev.ratelimit.web.contract.WebContractScenarios.Scenario;

/**
 * The gateway's side of the web contract's scenarios: a route for each route
 * scenario, proxied to the {@link ContractBackend}, applying the scenario's
 * limits with the starter's {@code RateLimit} filter (the policies, the
 * statuses that count, the cap) as the other stacks apply them with route
 * rules. What a gateway route cannot offer is said here.
 */
final class GatewayRoutes {

	/**
	 * Each route: its path under {@code /r/} ({@code **}: every path, the last route), its policies, its
	 * count-on and its caps.
	 */
	private static final String[][] ROUTES = { { "contract", "c-route", "", "" }, { "hidden", "c-hidden", "", "" },
			{ "missing", "c-missing", "", "" }, { "plans", "c-plans", "", "" }, { "exempt", "c-exempt", "", "" },
			{ "outcome", "c-outcome", "500", "" }, { "cap", "", "", "c-cap" }, { "open", "c-open", "", "" },
			{ "closed", "c-closed", "", "" }, { "local", "c-local", "", "" },
			{ "capped", "c-capped", "503", "c-shared-cap" }, { "**", "", "", "c-everywhere" } };

	private GatewayRoutes() {
	}

	/**
	 * Registers the routes.
	 * @param registry the test's dynamic properties
	 */
	static void register(DynamicPropertyRegistry registry) {
		String backend = ContractBackend.shared().uri();
		for (int i = 0; i < ROUTES.length; i++) {
			String[] route = ROUTES[i];
			String prefix = "spring.cloud.gateway.server.webflux.routes[" + i + "].";
			// The last route, "**", takes every path the others leave: the cap on every path.
			String path = route[0].equals("**") ? "/**" : "/r/" + route[0] + "/**";
			registry.add(prefix + "id", () -> "contract-" + (route[0].equals("**") ? "everywhere" : route[0]));
			registry.add(prefix + "uri", () -> backend);
			registry.add(prefix + "predicates[0]", () -> "Path=" + path);
			registry.add(prefix + "filters[0].name", () -> "RateLimit");
			if (!route[1].isEmpty()) {
				registry.add(prefix + "filters[0].args.policies", () -> route[1]);
			}
			if (!route[2].isEmpty()) {
				registry.add(prefix + "filters[0].args.count-on", () -> route[2]);
			}
			if (!route[3].isEmpty()) {
				registry.add(prefix + "filters[0].args.concurrency", () -> route[3]);
			}
		}
	}

	static @Nullable String cannot(Scenario scenario, boolean redis) {
		return switch (scenario) {
			case ANNOTATED_HANDLER, HELD_ANNOTATED_CALL -> "a gateway route proxies to a service of its own: "
					+ "annotations limit that service's methods, which the Spring MVC and WebFlux stacks run";
			case FROZEN_REDIS -> redis ? null : "the memory backend has no store to freeze";
			case CANCELLATION, MANAGEMENT_ENDPOINTS -> null;
		};
	}

}

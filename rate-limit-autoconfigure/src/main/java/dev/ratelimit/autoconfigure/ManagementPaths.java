package dev.ratelimit.autoconfigure;

import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.env.Environment;
import org.springframework.http.server.PathContainer;
import org.springframework.util.ClassUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

/**
 * Where the actuator's endpoints are served behind the route filter, so that
 * the route rules' concurrency caps leave them out
 * ({@code rate-limit.filter.cap-management-endpoints}, off by default): a cap
 * that is full, or an adaptive cap shedding, must not refuse a load balancer's
 * health probe, which would pull the instance exactly when it is busiest, nor
 * the endpoints that show why.
 * <p>
 * Nothing is left out when there are no such endpoints: no actuator, the
 * management server on a port of its own (its requests never pass the route
 * filter, and {@code /actuator} on the application's port is the
 * application's), or HTTP endpoints turned off. Nor when the endpoints are at
 * the root ({@code base-path: /}): no path tells them from the application's,
 * and the start-up report warns.
 */
final class ManagementPaths {

	private static final Log logger = LogFactory.getLog(ManagementPaths.class);

	/** Present when the actuator serves web endpoints. */
	private static final String ACTUATOR = "org.springframework.boot.actuate.autoconfigure.endpoint.web."
			+ "WebEndpointAutoConfiguration";

	private static final String PROPERTY = "rate-limit.filter.cap-management-endpoints";

	/** The endpoints' base path within the application, {@code /actuator}; {@code null} when there is none. */
	private final @Nullable String basePath;

	/** Whether the caps count the endpoints, as asked. */
	private final boolean capped;

	private ManagementPaths(@Nullable String basePath, boolean capped) {
		this.basePath = basePath;
		this.capped = capped;
	}

	/**
	 * Finds the management endpoints behind the route filter.
	 * @param environment the application's environment
	 * @param properties the rate-limit properties
	 * @param servlet whether the endpoints are served by Spring MVC's dispatcher servlet, under its
	 * {@code spring.mvc.servlet.path}; {@code false} on WebFlux
	 * @return the paths
	 */
	static ManagementPaths of(Environment environment, RateLimitProperties properties, boolean servlet) {
		boolean capped = properties.getFilter().isCapManagementEndpoints();
		if (!ClassUtils.isPresent(ACTUATOR, ManagementPaths.class.getClassLoader()) || !onApplicationPort(environment)) {
			return new ManagementPaths(null, capped);
		}
		String base = environment.getProperty("management.endpoints.web.base-path", "/actuator");
		String prefix = servlet ? environment.getProperty("spring.mvc.servlet.path", "") : "";
		return new ManagementPaths(withoutTrailingSlash(withoutTrailingSlash(prefix) + leadingSlash(base)), capped);
	}

	private static String leadingSlash(String path) {
		String stripped = path.strip();
		return stripped.startsWith("/") ? stripped : "/" + stripped;
	}

	private static String withoutTrailingSlash(String path) {
		String stripped = path.strip();
		while (stripped.endsWith("/")) {
			stripped = stripped.substring(0, stripped.length() - 1);
		}
		return stripped;
	}

	/**
	 * Whether the management endpoints are served on the application's own
	 * port, behind its filters: as Spring Boot's {@code ManagementPortType}
	 * decides it.
	 */
	private static boolean onApplicationPort(Environment environment) {
		Integer management = environment.getProperty("management.server.port", Integer.class);
		if (management == null) {
			return true;
		}
		Integer server = environment.getProperty("server.port", Integer.class);
		return (server == null && management == 8080) || (management != 0 && management.equals(server));
	}

	/**
	 * Returns the paths the route rules' caps leave out.
	 * @return {@code <base-path>/**}, or {@code null} when every path is capped as the rules say
	 */
	@Nullable PathPattern uncapped() {
		String base = this.basePath;
		if (this.capped || base == null || base.isEmpty()) {
			return null;
		}
		return PathPatternParser.defaultInstance.parse(base + "/**");
	}

	/**
	 * Says, for the start-up report, what a route rule with caps does to the
	 * management endpoints, and warns when its caps count them.
	 * @param rule the rule's pattern
	 * @param caps the rule's caps
	 * @return what to add to the rule's place in the report, empty when the rule never matches them
	 */
	String note(String rule, List<String> caps) {
		String base = this.basePath;
		if (caps.isEmpty() || base == null) {
			return "";
		}
		PathPattern pattern;
		try {
			pattern = PathPatternParser.defaultInstance.parse(rule);
		}
		catch (PatternParseException ex) {
			// Reported by the rule's own check, with its property.
			return "";
		}
		if (!pattern.matches(PathContainer.parsePath(base + "/health"))) {
			return "";
		}
		String where = base.isEmpty() ? "/" : base + "/**";
		if (!this.capped && !base.isEmpty()) {
			return " (not the management endpoints under " + where + ": " + PROPERTY + ")";
		}
		if (logger.isWarnEnabled()) {
			logger.warn("Route rule " + pattern.getPatternString() + " caps the management endpoints (" + where
					+ ") with " + caps + (this.capped ? " as " + PROPERTY + "=true asks"
							: ", which are served at the root (management.endpoints.web.base-path=/) where no path "
									+ "tells them from the application's")
					+ ": a full cap, or an adaptive cap shedding, refuses the health probe, and a load balancer "
					+ "takes the instance out of service when it is busiest. Serve them on a port of their own "
					+ "(management.server.port) or under a base path, or leave " + PROPERTY + " false");
		}
		return " (management endpoints included)";
	}

}

package dev.ratelimit.web.servlet;

import java.util.ArrayList;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.http.server.PathContainer;
import org.springframework.web.servlet.function.support.RouterFunctionMapping;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.util.pattern.PathPattern;

import dev.ratelimit.web.RouteRule;

/**
 * Warns at start-up about route rules that match none of the application's
 * request mappings: usually a typo in the pattern, which would otherwise
 * silently limit nothing. A heuristic: mappings are compared as patterns, with
 * their variables and wildcards filled in. An application that also maps
 * requests with router functions (a Spring Cloud Gateway Server MVC's routes)
 * is told at info level only: their paths cannot be read.
 */
public final class RouteRuleVerifier implements ApplicationListener<ContextRefreshedEvent> {

	private static final Log logger = LogFactory.getLog(RouteRuleVerifier.class);

	private final List<RouteRule> routes;

	private final List<RequestMappingInfoHandlerMapping> mappings;

	private volatile boolean verified;

	/**
	 * Creates a verifier.
	 * @param routes the route rules, in configuration order
	 * @param mappings the application's request mappings
	 */
	public RouteRuleVerifier(List<RouteRule> routes, List<RequestMappingInfoHandlerMapping> mappings) {
		this.routes = routes;
		this.mappings = mappings;
	}

	@Override
	public void onApplicationEvent(ContextRefreshedEvent event) {
		if (this.verified || this.mappings.isEmpty()) {
			return;
		}
		this.verified = true;
		List<PathPattern> mapped = new ArrayList<>();
		for (RequestMappingInfoHandlerMapping mapping : this.mappings) {
			for (RequestMappingInfo info : mapping.getHandlerMethods().keySet()) {
				if (info.getPathPatternsCondition() != null) {
					mapped.addAll(info.getPathPatternsCondition().getPatterns());
				}
			}
		}
		boolean functional = routesFunctionally(event.getApplicationContext());
		for (int i = 0; i < this.routes.size(); i++) {
			PathPattern route = this.routes.get(i).pattern();
			if (mapped.stream().noneMatch((pattern) -> overlaps(route, pattern))) {
				String rule = "Route rule rate-limit.routes[" + i + "] (" + route.getPatternString() + ")";
				if (!functional) {
					logger.warn(rule + " matches no request mapping of the application; check the pattern");
				}
				else if (logger.isInfoEnabled()) {
					// A router function's paths cannot be read: a gateway's routes (Spring Cloud Gateway Server
					// MVC) are router functions, and a rule on them is no typo.
					logger.info(rule + " matches no @RequestMapping; it may match the application's router "
							+ "functions (functional endpoints, a gateway's routes), which are not checked");
				}
			}
		}
	}

	/** Whether the application also maps requests with router functions, whose paths this cannot see. */
	private static boolean routesFunctionally(ApplicationContext context) {
		for (RouterFunctionMapping mapping : context.getBeansOfType(RouterFunctionMapping.class).values()) {
			if (mapping.getRouterFunction() != null) {
				return true;
			}
		}
		return false;
	}

	private static boolean overlaps(PathPattern route, PathPattern mapping) {
		return route.matches(PathContainer.parsePath(example(mapping)))
				|| mapping.matches(PathContainer.parsePath(example(route)));
	}

	/** A concrete path the pattern matches: variables and wildcards replaced by a segment. */
	private static String example(PathPattern pattern) {
		String path = pattern.getPatternString().replaceAll("\\{[^}]*}", "x").replace("**", "x").replace("*", "x");
		return path.isEmpty() ? "/" : path;
	}

}

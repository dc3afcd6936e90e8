package dev.ratelimit.actuate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.IncludeExcludeEndpointFilter;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Warns at start-up when the {@code ratelimits} endpoint's write operation (a
 * reset of one caller's limit or budget) is reachable over HTTP by anyone: its
 * access raised to {@code unrestricted}, exposed over the web, and no Spring
 * Security filter chain in the application. A caller over its limit could then
 * simply reset itself. The endpoint is read-only unless a user raises it.
 */
final class EndpointWriteAccessCheck implements SmartInitializingSingleton, AopInfrastructureBean {

	private static final Log logger = LogFactory.getLog(EndpointWriteAccessCheck.class);

	private static final EndpointId ID = EndpointId.of(RateLimitEndpoint.ID);

	private static final String SECURITY_FILTER_CHAIN = "org.springframework.security.web.SecurityFilterChain";

	private final Environment environment;

	private final EndpointAccessResolver access;

	private final ListableBeanFactory beanFactory;

	EndpointWriteAccessCheck(Environment environment, EndpointAccessResolver access, ListableBeanFactory beanFactory) {
		this.environment = environment;
		this.access = access;
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (writesOpenToAnyone()) {
			logger.warn("The ratelimits endpoint's writes (DELETE /actuator/ratelimits/{policy}/{key}, a reset; POST and "
					+ "DELETE /actuator/ratelimits/{name}, overrides of a limit's numbers) are exposed over "
					+ "HTTP with management.endpoint.ratelimits.access=unrestricted, and the application has no "
					+ "Spring Security filter chain: any client that reaches the management port can reset its own "
					+ "limits and budgets. Secure the actuator endpoints, move them to a private management port, or "
					+ "set management.endpoint.ratelimits.access=read-only.");
		}
	}

	/**
	 * Returns whether a write to the endpoint would reach it from any client.
	 * @return whether to warn
	 */
	boolean writesOpenToAnyone() {
		return this.access.accessFor(ID, RateLimitEndpoint.DEFAULT_ACCESS) == Access.UNRESTRICTED && exposedOverWeb()
				&& !secured();
	}

	private boolean exposedOverWeb() {
		return new IncludeExcludeEndpointFilter<>(ExposableWebEndpoint.class, this.environment,
				"management.endpoints.web.exposure", "health")
			.match(ID);
	}

	private boolean secured() {
		ClassLoader classLoader = getClass().getClassLoader();
		if (!ClassUtils.isPresent(SECURITY_FILTER_CHAIN, classLoader)) {
			return false;
		}
		Class<?> chain = ClassUtils.resolveClassName(SECURITY_FILTER_CHAIN, classLoader);
		return this.beanFactory.getBeanNamesForType(chain, false, false).length > 0;
	}

}

package dev.ratelimit.aop;

/**
 * Classes whose limited methods are enforced by whoever calls them, so that
 * {@link LimitPointcut} leaves them unproxied: in a Spring MVC application,
 * the {@code @Controller} classes whose limited methods are all request
 * handler methods, which the starter's handler adapter limits as it invokes
 * them (see {@code dev.ratelimit.web.servlet.LimitedControllers}). A class exempted
 * here must be enforced there: the two read one answer.
 */
@FunctionalInterface
public interface ProxyExemptions {

	/** No class is exempt: every limited method is enforced through a proxy. */
	ProxyExemptions NONE = (type) -> false;

	/**
	 * Returns whether the limits of a class's methods are enforced without a
	 * proxy.
	 * @param type the bean's class (a proxy's user class)
	 * @return whether no proxy is needed for its limits
	 */
	boolean isExempt(Class<?> type);

}

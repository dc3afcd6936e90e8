package dev.ratelimit.benchmarks;

import java.util.List;

/**
 * Which web stack the HTTP benchmark measures: the servlet sample
 * ({@code sample-app}, Spring MVC on Tomcat) or the reactive one
 * ({@code sample-reactive-app}, WebFlux on Reactor Netty). Both samples have
 * the same {@code GET /api/hello} under the route rule {@code /api/** -> per-ip},
 * the actuator's metrics endpoint and the benchmark aid
 * {@code sample.benchmark.redis-incr-floor}, so one harness measures both; this
 * says only where the jar is, what the server needs told and how the results
 * are named.
 */
public enum WebStack {

	/** Spring MVC on Tomcat: the {@code sample-app} module. */
	SERVLET("servlet", "sample-app", "HTTP", "",
			// Tomcat closes a keep-alive connection after 100 requests by default; reconnecting
			// would add TCP set-up to every case and, at tens of thousands of requests per
			// second, fill the ephemeral port range with TIME_WAIT sockets.
			List.of("--server.tomcat.max-keep-alive-requests=-1")),

	/**
	 * WebFlux on Reactor Netty: the {@code sample-reactive-app} module. Netty
	 * keeps a connection open for any number of requests by default
	 * ({@code server.netty.max-keep-alive-requests} unset), so nothing is added.
	 */
	REACTIVE("reactive", "sample-reactive-app", "HTTP (WebFlux)", "WebFlux, ", List.of());

	private final String option;

	private final String module;

	private final String goalPrefix;

	private final String tablePrefix;

	private final List<String> serverArguments;

	WebStack(String option, String module, String goalPrefix, String tablePrefix, List<String> serverArguments) {
		this.option = option;
		this.module = module;
		this.goalPrefix = goalPrefix;
		this.tablePrefix = tablePrefix;
		this.serverArguments = serverArguments;
	}

	/**
	 * Reads {@code --stack}.
	 * @param option {@code servlet} or {@code reactive}
	 * @return the stack
	 */
	static WebStack of(String option) {
		for (WebStack stack : values()) {
			if (stack.option.equals(option)) {
				return stack;
			}
		}
		throw new IllegalArgumentException("--stack takes servlet or reactive, got " + option);
	}

	/** @return the option's value, {@code servlet} or {@code reactive} */
	String option() {
		return this.option;
	}

	/** @return the sample's Maven module, whose {@code target} holds its jar */
	String module() {
		return this.module;
	}

	/** @return how the goals of this stack begin: {@code HTTP} (as before there was a second stack) or {@code HTTP (WebFlux)} */
	String goalPrefix() {
		return this.goalPrefix;
	}

	/** @return what the tables' titles say first, empty for the servlet stack */
	String tablePrefix() {
		return this.tablePrefix;
	}

	/** @return arguments every server JVM of this stack gets */
	List<String> serverArguments() {
		return this.serverArguments;
	}

}

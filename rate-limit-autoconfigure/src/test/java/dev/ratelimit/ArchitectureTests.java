package dev.ratelimit;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The architecture's rules, checked on the compiled classes: what each layer
 * may import. A rule broken fails here, naming the class and the import, rather
 * than in a review.
 */
class ArchitectureTests {

	private static final JavaClasses PRODUCTION = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.ratelimit");

	/** The stacks the core must not know: Spring, the servlet API, WebFlux, Reactor, the Redis clients. */
	private static final String[] NOT_IN_CORE = { "org.springframework..", "jakarta.servlet..", "reactor..",
			"io.netty..", "io.lettuce..", "redis.clients.." };

	@Test
	void theCoreKnowsNoFrameworkNoWebStackAndNoStore() {
		ArchRule rule = noClasses().that()
			.resideInAPackage("dev.ratelimit.core..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(NOT_IN_CORE)
			.because("the core (policies, algorithms, decisions, the stores' SPI) is plain Java: every stack and "
					+ "store adapts to it, never the reverse");
		rule.check(PRODUCTION);
	}

	@Test
	void theCoreKnowsNoWebConcern() {
		ArchRule rule = noClasses().that()
			.resideInAPackage("dev.ratelimit.core..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.ratelimit.web..", "dev.ratelimit.gateway..", "dev.ratelimit.aop..",
					"dev.ratelimit.redis..", "dev.ratelimit.autoconfigure..", "dev.ratelimit.actuate..")
			.because("client addresses, forwarded headers and HTTP answers are the web contract's, not the core's");
		rule.check(PRODUCTION);
	}

	/** The web stacks the shared web contract must not know. */
	private static final String[] WEB_STACKS = { "jakarta.servlet..", "reactor..", "io.netty..",
			"org.springframework.web.servlet..", "org.springframework.web.server..",
			"org.springframework.web.reactive..", "org.springframework.http.server.reactive..",
			"org.springframework.cloud.gateway..", "dev.ratelimit.web.servlet..", "dev.ratelimit.web.reactive..",
			"dev.ratelimit.gateway.." };

	@Test
	void theWebContractKnowsNoWebStack() {
		ArchRule rule = noClasses().that()
			.resideInAPackage("dev.ratelimit.web")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(WEB_STACKS)
			.because("what a limit tells a request and how a route decides is written once, for every stack: "
					+ "the servlet, WebFlux and gateway adapters depend on it, never the reverse");
		rule.check(PRODUCTION);
	}

	@Test
	void theWebStacksDoNotKnowEachOther() {
		noClasses().that()
			.resideInAPackage("dev.ratelimit.web.servlet..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("reactor..", "org.springframework.web.server..", "org.springframework.web.reactive..",
					"org.springframework.http.server.reactive..", "dev.ratelimit.web.reactive..")
			.because("a servlet application loads no reactive type")
			.check(PRODUCTION);
		noClasses().that()
			.resideInAPackage("dev.ratelimit.web.reactive..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("jakarta.servlet..", "org.springframework.web.servlet..", "dev.ratelimit.web.servlet..")
			.because("a WebFlux application loads no servlet type")
			.check(PRODUCTION);
	}

}

package dev.ratelimit.test.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Enforces the application's limits in a test slice, such as
 * {@code @WebMvcTest}, that would otherwise leave them out: a slice runs only
 * the auto-configurations its annotations list, and the rate limiter's is not
 * one of them, so without this annotation {@code @RateLimited},
 * {@code @CostBudget}, {@code @Concurrency} and the route rules are silently
 * ignored.
 * <pre class="code">
 * &#64;WebMvcTest(AgentController.class)
 * &#64;AutoConfigureRateLimit
 * class AgentControllerTests { ... }
 * </pre>
 * It imports, as listed in
 * {@code META-INF/spring/dev.ratelimit.test.autoconfigure.AutoConfigureRateLimit.imports}:
 * <ul>
 * <li>the limiter's auto-configuration: policies, the backend chosen by
 * {@code rate-limit.backend}, the aspects and, in a servlet slice, the route
 * rules' filter, which {@code @AutoConfigureMockMvc} adds to {@code MockMvc}
 * like every filter bean;</li>
 * <li>Spring Boot's AOP auto-configuration, which proxies the annotated
 * controllers so that the aspects run;</li>
 * <li>Spring Data Redis's auto-configuration, when it is on the classpath, for
 * an application on {@code rate-limit.backend=redis}; set
 * {@code rate-limit.backend=memory} in the test to keep a slice off Redis.</li>
 * </ul>
 * The slice reads the application's {@code rate-limit.*} properties, so
 * {@code rate-limit.enabled=false} turns the limits off here too. A
 * {@code @SpringBootTest} needs no such annotation: it runs every
 * auto-configuration.
 * <p>
 * Only Spring Boot's auto-configuration support is needed on the classpath:
 * this annotation brings no test library into the application.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureRateLimit {

}

package dev.ratelimit.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

/**
 * Matches when the application configures something under a
 * {@code rate-limit.*} group ({@code rate-limit.routes[0].pattern},
 * {@code rate-limit.clients.github.base-url}): the beans of a feature that
 * only configuration can ask for are created when it is asked for, and not
 * otherwise. Read from the environment, without binding.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.TYPE, ElementType.METHOD })
@Documented
@Conditional(OnConfiguredCondition.class)
@interface ConditionalOnConfigured {

	/**
	 * The group, such as {@code rate-limit.routes}.
	 * @return the group's name
	 */
	String value();

}

package dev.ratelimit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;

import dev.ratelimit.aop.LimitedMethodReflectiveProcessor;

/**
 * Container of repeated {@link RateLimited} annotations; the compiler writes it
 * when a method carries more than one.
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Reflective(LimitedMethodReflectiveProcessor.class)
public @interface RateLimits {

	/**
	 * The repeated annotations.
	 * @return the annotations
	 */
	RateLimited[] value();

}

package dev.ratelimit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Container of repeated {@link RateLimited} annotations; the compiler writes it
 * when a method carries more than one.
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RateLimits {

	/**
	 * The repeated annotations.
	 * @return the annotations
	 */
	RateLimited[] value();

}

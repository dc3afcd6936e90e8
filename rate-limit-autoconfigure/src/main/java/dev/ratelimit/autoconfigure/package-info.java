/**
 * Spring Boot auto-configuration and the {@code rate-limit.*} properties.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.autoconfigure;

import org.jspecify.annotations.NullMarked;

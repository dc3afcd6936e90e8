/**
 * The actuator side: the {@code ratelimits} endpoint, health, and live
 * overrides over HTTP.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.actuate;

import org.jspecify.annotations.NullMarked;

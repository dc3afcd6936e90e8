/**
 * Limits that change while the application runs: refreshed configuration and
 * overrides shared between instances.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.live;

import org.jspecify.annotations.NullMarked;

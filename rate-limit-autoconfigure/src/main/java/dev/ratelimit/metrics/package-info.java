/**
 * Micrometer meters and observations of decisions, stores and failures.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.metrics;

import org.jspecify.annotations.NullMarked;

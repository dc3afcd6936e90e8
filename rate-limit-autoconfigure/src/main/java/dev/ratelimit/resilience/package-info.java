/**
 * Failure modes: what a limit does while its store cannot answer.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.resilience;

import org.jspecify.annotations.NullMarked;

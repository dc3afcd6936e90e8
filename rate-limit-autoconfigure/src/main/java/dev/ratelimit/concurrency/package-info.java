/**
 * Concurrency caps: fixed, distributed and adaptive limits on calls in flight.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.concurrency;

import org.jspecify.annotations.NullMarked;

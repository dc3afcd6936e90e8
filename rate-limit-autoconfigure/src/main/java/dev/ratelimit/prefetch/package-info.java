/**
 * Prefetch mode: tokens taken from the store in batches and spent locally.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.prefetch;

import org.jspecify.annotations.NullMarked;

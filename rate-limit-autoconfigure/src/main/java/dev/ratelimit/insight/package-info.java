/**
 * Heavy hitters: the keys that spend the most, found in bounded memory.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.insight;

import org.jspecify.annotations.NullMarked;

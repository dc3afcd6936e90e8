/**
 * Keys, costs and conditions: SpEL over the request and the arguments, and
 * where a limit applies.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.key;

import org.jspecify.annotations.NullMarked;

/**
 * Cost budgets: reservations before a call, settlement after it, in money or
 * tokens.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.budget;

import org.jspecify.annotations.NullMarked;

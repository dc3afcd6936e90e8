/**
 * Plans (tiers): the numbers of a limit by the caller's plan.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.plans;

import org.jspecify.annotations.NullMarked;

/**
 * The starter's annotations ({@code @RateLimited}, {@code @CostBudget}, {@code
 * @Concurrency}) and its programmatic API ({@code Limits}, {@code
 * LimitRegistry}).
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit;

import org.jspecify.annotations.NullMarked;

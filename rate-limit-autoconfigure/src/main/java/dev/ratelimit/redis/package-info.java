/**
 * The Redis backend: Lua scripts and functions through Spring Data Redis and
 * Lettuce, failovers and outages.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.redis;

import org.jspecify.annotations.NullMarked;

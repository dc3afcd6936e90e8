/**
 * The limit advice of annotated methods: resolving their annotations,
 * deciding, calling, settling.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.aop;

import org.jspecify.annotations.NullMarked;

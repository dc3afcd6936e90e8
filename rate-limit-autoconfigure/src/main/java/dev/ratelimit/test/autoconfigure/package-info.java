/**
 * Test support: {@code @AutoConfigureRateLimit} and what a test needs to
 * control the limiter.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.test.autoconfigure;

import org.jspecify.annotations.NullMarked;

/**
 * Provider clients: an upstream's rate, caps and pauses kept by the calls made
 * to it.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.client;

import org.jspecify.annotations.NullMarked;

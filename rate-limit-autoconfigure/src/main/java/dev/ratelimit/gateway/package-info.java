/**
 * Spring Cloud Gateway (server WebFlux): the {@code RateLimit} filter and the
 * limiter for {@code RequestRateLimiter}.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.gateway;

import org.jspecify.annotations.NullMarked;

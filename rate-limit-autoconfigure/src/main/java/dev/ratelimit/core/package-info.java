/**
 * The core model: policies, algorithms, decisions and the stores' SPI, in
 * plain Java with no framework, web stack or store client.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.core;

import org.jspecify.annotations.NullMarked;

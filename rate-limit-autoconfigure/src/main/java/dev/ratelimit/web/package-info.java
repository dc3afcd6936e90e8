/**
 * The web contract, written once for every stack: route decisions, the
 * exchange port, header fields, refusals and client addresses; no servlet,
 * Reactor or WebFlux type.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.web;

import org.jspecify.annotations.NullMarked;

/**
 * The servlet (Spring MVC) adapters of the web contract: the route filter, the
 * request binding of annotated methods, refusals.
 * <p>
 * Everything here is non-null unless marked {@code @Nullable}, as in Spring
 * Framework 7 and Spring Boot 4; NullAway checks it when the project builds.
 */
@NullMarked
package dev.ratelimit.web.servlet;

import org.jspecify.annotations.NullMarked;

package dev.ratelimit.aop;

/**
 * {@link FallbackTests} on the in-memory backend.
 */
class InMemoryFallbackTests extends FallbackTests {

}

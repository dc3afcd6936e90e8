package dev.ratelimit.budget;

/**
 * {@link NestedRefusalTests} on the in-memory backend.
 */
class InMemoryNestedRefusalTests extends NestedRefusalTests {

}

package dev.ratelimit.outcome;

/**
 * {@link CountByOutcomeTests} on the in-memory backend.
 */
class InMemoryCountByOutcomeTests extends CountByOutcomeTests {

}

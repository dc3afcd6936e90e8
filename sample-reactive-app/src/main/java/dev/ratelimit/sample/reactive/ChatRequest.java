package dev.ratelimit.sample.reactive;

/**
 * A chat request to the agent.
 *
 * @param prompt what to ask
 * @param maxTokens the most tokens the answer may use
 */
public record ChatRequest(String prompt, int maxTokens) {
}

package dev.ratelimit.web;


/**
 * What a request is told and how its caller is known, the same for every web
 * stack: the client address with its trusted-proxy rules, the rate-limit
 * header fields and the budget header field. The servlet and the reactive
 * request bindings are two thin faces of it.
 *
 * @param ipResolver resolves client addresses
 * @param headers writes the rate-limit header fields
 * @param budgetHeaders writes the budget header field
 */
public record WebContract(ClientIpResolver ipResolver, RateLimitHeaders headers, BudgetHeaders budgetHeaders) {
}

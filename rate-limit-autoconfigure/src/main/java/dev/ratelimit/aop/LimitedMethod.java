package dev.ratelimit.aop;

import java.lang.reflect.Method;
import java.util.List;

import dev.ratelimit.key.BoundPolicy;

/**
 * The policies of one annotated method, resolved once.
 *
 * @param method the most specific method, whose parameter names expressions use
 * @param policies the policies in declaration order
 */
public record LimitedMethod(Method method, List<BoundPolicy> policies) {
}

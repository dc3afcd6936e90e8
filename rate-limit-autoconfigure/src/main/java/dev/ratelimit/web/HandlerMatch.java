package dev.ratelimit.web;

import java.lang.reflect.Method;
import java.util.Arrays;

import org.jspecify.annotations.Nullable;

import org.springframework.web.method.HandlerMethod;

/**
 * Tells whether an annotated method is a request's handler itself, rather than
 * a service the handler calls, from the handler the request was mapped to:
 * the rule of {@link dev.ratelimit.core.Visibility#AUTO}, the same for servlet
 * and reactive requests.
 */
final class HandlerMatch {

	private HandlerMatch() {
	}

	/**
	 * Returns whether a method is the handler a request was mapped to.
	 * @param handler the request's best matching handler attribute, or {@code null}
	 * @param method the annotated method, as the aspect sees it
	 * @return whether it handles the request
	 */
	static boolean isHandler(@Nullable Object handler, Method method) {
		if (!(handler instanceof HandlerMethod handlerMethod)) {
			return false;
		}
		Method handling = handlerMethod.getMethod();
		// The aspect sees the most specific method of the bean's class; the mapping may hold an interface's.
		return handling.equals(method) || (handling.getName().equals(method.getName())
				&& Arrays.equals(handling.getParameterTypes(), method.getParameterTypes())
				&& handling.getDeclaringClass().isAssignableFrom(method.getDeclaringClass()));
	}

}

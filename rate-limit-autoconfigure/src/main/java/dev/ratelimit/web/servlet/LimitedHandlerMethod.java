package dev.ratelimit.web.servlet;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Method;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.annotation.ServletInvocableHandlerMethod;

/**
 * A limited controller method as Spring MVC invokes it without a proxy: the
 * call, with the arguments Spring MVC resolved, goes through the limit advice
 * as a {@link MethodInvocation} whose {@code proceed()} is Spring MVC's own
 * invocation of the method. What the advice does (deciding, the fallback,
 * settling an asynchronous result) is the same as behind a proxy; an
 * exception it throws reaches Spring MVC's exception resolvers as the
 * method's would.
 */
final class LimitedHandlerMethod extends ServletInvocableHandlerMethod {

	private final MethodInterceptor advice;

	LimitedHandlerMethod(HandlerMethod handlerMethod, MethodInterceptor advice) {
		super(handlerMethod);
		this.advice = advice;
	}

	@Override
	protected @Nullable Object doInvoke(@Nullable Object... args) throws Exception {
		try {
			return this.advice.invoke(new Invocation(args));
		}
		catch (Exception | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			// Neither: nothing a Java method can throw without declaring it some other way.
			throw new IllegalStateException("Invocation failure of " + getMethod(), ex);
		}
	}

	/** Spring MVC's invocation of the method, without the advice. */
	private @Nullable Object invokeMethod(@Nullable Object[] args) throws Exception {
		return super.doInvoke(args);
	}

	/** The call as the advice sees it: the method, its bean and arguments, and how to proceed. */
	private final class Invocation implements MethodInvocation {

		private final @Nullable Object[] args;

		Invocation(@Nullable Object[] args) {
			this.args = args;
		}

		@Override
		public Method getMethod() {
			return LimitedHandlerMethod.this.getMethod();
		}

		@Override
		public @Nullable Object[] getArguments() {
			return this.args;
		}

		@Override
		public @Nullable Object proceed() throws Throwable {
			return invokeMethod(this.args);
		}

		@Override
		public Object getThis() {
			// As behind the starter's own proxy, the call's target is the bean itself, not a proxy other advice
			// made of it: a fallback is called on it directly, outside that advice.
			Object bean = getBean();
			Object target = AopProxyUtils.getSingletonTarget(bean);
			return (target != null) ? target : bean;
		}

		@Override
		public AccessibleObject getStaticPart() {
			return getMethod();
		}

	}

}

package dev.ratelimit.aop;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

import org.jspecify.annotations.Nullable;

import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.ratelimit.core.RateLimitException;

/**
 * The fallback of an annotated method, resolved once at start-up: the
 * overloads of the named method of the bean that fit the annotated method, and
 * which of them takes which refusal.
 * <p>
 * An overload fits when it takes the annotated method's parameters (each of the
 * same type or a supertype; a primitive only as itself), optionally followed by
 * one parameter receiving the refusal (a {@link RateLimitException}, a subtype,
 * or a supertype such as {@code Exception}), and returns what the annotated
 * method may return ({@code void} only for {@code void}, a primitive only as
 * itself). Of the overloads with the same refusal parameter the most specific
 * is kept (none being more specific is an error); a refusal goes to the one
 * whose refusal parameter is the most specific type that takes it, else to the
 * one without a refusal parameter, else it is thrown.
 */
public final class FallbackMethod {

	private final String name;

	/** Most specific refusal type first; the overload without one last. */
	private final List<Overload> overloads;

	private FallbackMethod(String name, List<Overload> overloads) {
		this.name = name;
		this.overloads = overloads;
	}

	/** @return the name of the fallback method */
	public String name() {
		return this.name;
	}

	/** @return the overloads that may be called, in the order they are tried */
	public List<Method> methods() {
		return this.overloads.stream().map(Overload::method).toList();
	}

	/**
	 * Returns whether an overload takes a refusal.
	 * @param refusal the refusal
	 * @return whether {@link #call} calls one rather than throwing the refusal
	 */
	boolean takes(RateLimitException refusal) {
		for (Overload overload : this.overloads) {
			if (overload.takes(refusal)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Calls the fallback that takes a refusal, on the bean's target (not its
	 * proxy, so the fallback is not limited), or throws the refusal when none
	 * takes it.
	 * @param target the bean's target object
	 * @param arguments the arguments of the refused call
	 * @param refusal the refusal
	 * @return what the fallback returned
	 * @throws Throwable what the fallback threw, or the refusal
	 */
	@Nullable Object call(@Nullable Object target, Object[] arguments, RateLimitException refusal) throws Throwable {
		for (Overload overload : this.overloads) {
			if (overload.takes(refusal)) {
				return overload.invoke(target, arguments, refusal);
			}
		}
		throw refusal;
	}

	/**
	 * Resolves a fallback.
	 * @param annotated the annotated method
	 * @param beanClass the class of the bean, whose methods (declared or
	 * inherited, of any visibility) are searched
	 * @param name the fallback's name
	 * @param errors makes the error to throw from a problem and the action that fixes it
	 * @return the fallback
	 */
	static FallbackMethod resolve(Method annotated, Class<?> beanClass, String name, Errors errors) {
		Class<?> userClass = ClassUtils.getUserClass(beanClass);
		Method[] named = ReflectionUtils.getUniqueDeclaredMethods(userClass,
				(method) -> method.getName().equals(name) && !method.isBridge() && !method.isSynthetic());
		String fits = "Declare it in " + userClass.getName() + " as " + fitting(annotated, name)
				+ " (any visibility; parameters may be supertypes, the refusal a subtype).";
		if (named.length == 0) {
			throw errors.error("its fallback '" + name + "' does not exist: " + userClass.getName()
					+ " has no method named '" + name + "'", fits);
		}
		// Reflection's order is unspecified: sorted, messages read the same on every run.
		Arrays.sort(named, Comparator.comparing(FallbackMethod::signature));
		List<String> misfits = new ArrayList<>();
		Map<Class<?>, List<Method>> byRefusal = new LinkedHashMap<>();
		for (Method candidate : named) {
			String misfit = misfit(annotated, candidate, userClass);
			if (misfit != null) {
				misfits.add(signature(candidate) + " " + misfit);
			}
			else {
				byRefusal.computeIfAbsent(refusalType(annotated, candidate), (type) -> new ArrayList<>())
					.add(candidate);
			}
		}
		if (byRefusal.isEmpty()) {
			throw errors.error("its fallback '" + name + "' does not fit: " + String.join("; ", misfits), fits);
		}
		List<Overload> overloads = new ArrayList<>();
		byRefusal.forEach((refusal, candidates) -> {
			Method chosen = mostSpecific(candidates);
			if (chosen == null) {
				StringJoiner tied = new StringJoiner(", ");
				candidates.forEach((candidate) -> tied.add(signature(candidate)));
				throw errors.error("its fallback '" + name + "' is ambiguous: " + tied
						+ " all fit and none is more specific than the others",
						"Keep one of them, or rename the others.");
			}
			ReflectionUtils.makeAccessible(chosen);
			overloads.add(new Overload(chosen, (refusal == Void.class) ? null : refusal));
		});
		overloads.sort(Comparator.comparingInt(Overload::depth).reversed());
		return new FallbackMethod(name, List.copyOf(overloads));
	}

	/** Why a candidate does not fit, or {@code null} when it does. */
	private static @Nullable String misfit(Method annotated, Method candidate, Class<?> userClass) {
		if (candidate.equals(annotated) || (candidate.getName().equals(annotated.getName())
				&& Arrays.equals(candidate.getParameterTypes(), annotated.getParameterTypes()))) {
			return "is the annotated method itself";
		}
		int count = annotated.getParameterCount();
		if (candidate.getParameterCount() != count && candidate.getParameterCount() != count + 1) {
			return "takes " + candidate.getParameterCount()
					+ ((candidate.getParameterCount() == 1) ? " parameter" : " parameters") + ", not " + count
					+ " (the method's) or "
					+ (count + 1) + " (the method's and the refusal)";
		}
		for (int i = 0; i < count; i++) {
			ResolvableType parameter = ResolvableType.forMethodParameter(candidate, i, userClass);
			ResolvableType argument = ResolvableType.forMethodParameter(annotated, i, userClass);
			if (!assignable(parameter, argument)) {
				return "cannot take argument " + (i + 1) + " (" + simple(argument) + ") in its parameter "
						+ simple(parameter);
			}
		}
		if (candidate.getParameterCount() == count + 1) {
			Class<?> refusal = candidate.getParameterTypes()[count];
			if (!Throwable.class.isAssignableFrom(refusal) || !(refusal.isAssignableFrom(RateLimitException.class)
					|| RateLimitException.class.isAssignableFrom(refusal))) {
				return "cannot receive a refusal in its last parameter " + refusal.getSimpleName()
						+ " (a refusal is a RateLimitException)";
			}
		}
		ResolvableType returned = ResolvableType.forMethodReturnType(candidate, userClass);
		ResolvableType expected = ResolvableType.forMethodReturnType(annotated, userClass);
		if (!assignable(expected, returned)) {
			return "returns " + simple(returned) + ", which the method cannot return (it returns " + simple(expected)
					+ ")";
		}
		return null;
	}

	/**
	 * Whether a value of one type can be passed as another: {@code void} and
	 * primitives only as themselves, so that no {@code null} is ever unboxed.
	 */
	private static boolean assignable(ResolvableType to, ResolvableType from) {
		Class<?> toClass = to.toClass();
		Class<?> fromClass = from.toClass();
		if (toClass.isPrimitive() || fromClass.isPrimitive()) {
			return toClass == fromClass || (!toClass.isPrimitive() && toClass != Void.class
					&& toClass.isAssignableFrom(ClassUtils.resolvePrimitiveIfNecessary(fromClass)));
		}
		return to.isAssignableFrom(from);
	}

	/** The candidate's refusal parameter type, {@link Void} when it has none. */
	private static Class<?> refusalType(Method annotated, Method candidate) {
		return (candidate.getParameterCount() > annotated.getParameterCount())
				? candidate.getParameterTypes()[annotated.getParameterCount()] : Void.class;
	}

	/** The candidate whose parameters all fit every other's, or {@code null} when there is none. */
	private static @Nullable Method mostSpecific(List<Method> candidates) {
		for (Method candidate : candidates) {
			boolean specific = true;
			for (Method other : candidates) {
				specific &= other == candidate || fitsIn(candidate.getParameterTypes(), other.getParameterTypes());
			}
			if (specific) {
				return candidate;
			}
		}
		return null;
	}

	private static boolean fitsIn(Class<?>[] types, Class<?>[] others) {
		for (int i = 0; i < types.length; i++) {
			if (!ClassUtils.isAssignable(others[i], types[i])) {
				return false;
			}
		}
		return true;
	}

	private static String fitting(Method annotated, String name) {
		StringJoiner parameters = new StringJoiner(", ");
		for (int i = 0; i < annotated.getParameterCount(); i++) {
			parameters.add(simple(ResolvableType.forMethodParameter(annotated, i)) + " "
					+ annotated.getParameters()[i].getName());
		}
		String start = simple(ResolvableType.forMethodReturnType(annotated)) + " " + name + "(" + parameters;
		return start + ") or " + start + ((annotated.getParameterCount() > 0) ? ", " : "")
				+ "RateLimitException refusal)";
	}

	/** {@code String name(int, List<String>)}, for messages. */
	static String signature(Method method) {
		StringJoiner parameters = new StringJoiner(", ", method.getName() + "(", ")");
		for (int i = 0; i < method.getParameterCount(); i++) {
			parameters.add(simple(ResolvableType.forMethodParameter(method, i)));
		}
		return simple(ResolvableType.forMethodReturnType(method)) + " " + parameters;
	}

	/** A type without its packages: {@code Map<String, List<Reply>>}. */
	private static String simple(ResolvableType type) {
		return type.getType().getTypeName().replaceAll("\\b[a-z][a-z0-9_]*\\.", "").replace('$', '.');
	}

	/**
	 * Makes the error a misfit is reported with.
	 */
	@FunctionalInterface
	interface Errors {

		/**
		 * Makes an error.
		 * @param problem what is wrong, after the method and annotation
		 * @param action what fixes it
		 * @return the error to throw
		 */
		RuntimeException error(String problem, String action);

	}

	/** One overload and the refusals it takes. */
	private record Overload(Method method, @Nullable Class<?> refusalType) {

		boolean takes(RateLimitException refusal) {
			return this.refusalType == null || this.refusalType.isInstance(refusal);
		}

		/** How deep the refusal type is in the class hierarchy; -1 without one, so that it comes last. */
		int depth() {
			int depth = -1;
			for (Class<?> type = this.refusalType; type != null; type = type.getSuperclass()) {
				depth++;
			}
			return depth;
		}

		@Nullable Object invoke(@Nullable Object target, Object[] arguments, RateLimitException refusal)
				throws Throwable {
			Object[] passed = arguments;
			if (this.refusalType != null) {
				passed = Arrays.copyOf(arguments, arguments.length + 1);
				passed[arguments.length] = refusal;
			}
			try {
				return this.method.invoke(Modifier.isStatic(this.method.getModifiers()) ? null : target, passed);
			}
			catch (InvocationTargetException ex) {
				throw ex.getTargetException();
			}
		}

	}

}

package dev.ratelimit.aop;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.annotation.SimpleReflectiveProcessor;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.annotation.RepeatableContainers;
import org.springframework.util.ReflectionUtils;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.key.OutcomeSettlement;

/**
 * The reflection a native image needs for a method carrying a limit
 * annotation, registered ahead of time: the limit annotations are
 * {@code @Reflective} with this processor, so Spring's AOT processing runs it on
 * every such method of every bean (directly annotated, through a composed
 * annotation, or declared on an interface the bean implements).
 * <ul>
 * <li>The method itself, for invocation: the pointcut and the start-up scan
 * find limited methods by reading a class's declared methods, the proxy calls
 * the target's method reflectively, and {@code #name} variables need the
 * method's parameter names, which a native image keeps only for registered
 * methods.</li>
 * <li>Its fallback's overloads, for invocation: they are looked up by name
 * ({@link FallbackMethod}) and called reflectively. A fallback named through a
 * placeholder is only known at run time and is not registered.</li>
 * <li>For binding, the types of the parameters its expressions read
 * ({@code #name}, {@code #p0}, {@code #a0}) and its return type when they read
 * {@code #result}: SpEL reads their properties ({@code #request.maxTokens},
 * {@code #result.usage.costUsd}) reflectively.</li>
 * </ul>
 * Expressions that a policy configured in {@code application.yml} applies to
 * the method are not seen here: what they read of an argument must be
 * registered by the application.
 */
public final class LimitedMethodReflectiveProcessor extends SimpleReflectiveProcessor {

	/** The annotations whose attributes name fallbacks and hold expressions. */
	private static final List<Class<? extends Annotation>> LIMITS = List.of(RateLimited.class, CostBudget.class,
			Concurrency.class);

	/** A SpEL variable reference: {@code #tenant}, {@code #p0}, {@code #result}. */
	private static final Pattern VARIABLE = Pattern.compile("#([A-Za-z_$][A-Za-z0-9_$]*)");

	/** A variable naming an argument by its index: {@code #p0}, {@code #a1}. */
	private static final Pattern INDEX = Pattern.compile("[pa](\\d+)");

	private static final String FALLBACK = "fallback";

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();

	@Override
	protected void registerMethodHint(ReflectionHints hints, Method method) {
		super.registerMethodHint(hints, method);
		Set<String> fallbacks = new LinkedHashSet<>();
		Set<String> variables = new LinkedHashSet<>();
		MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY, RepeatableContainers.standardRepeatables())
			.stream()
			.filter((annotation) -> LIMITS.contains(annotation.getType()))
			.forEach((annotation) -> read(annotation, fallbacks, variables));
		for (String fallback : fallbacks) {
			registerFallback(hints, method, fallback);
		}
		this.bindings.registerReflectionHints(hints, typesRead(method, variables));
	}

	/** Collects an annotation's fallback name and the variables its expressions read. */
	private static void read(MergedAnnotation<Annotation> annotation, Set<String> fallbacks, Set<String> variables) {
		annotation.asMap().forEach((attribute, value) -> {
			if (!(value instanceof String text)) {
				return;
			}
			if (FALLBACK.equals(attribute)) {
				String name = text.strip();
				// A placeholder's value is only known at run time.
				if (!name.isEmpty() && !name.contains("${")) {
					fallbacks.add(name);
				}
				return;
			}
			Matcher matcher = VARIABLE.matcher(text);
			while (matcher.find()) {
				variables.add(matcher.group(1));
			}
		});
	}

	/**
	 * Registers the methods a fallback name may resolve to: every method of that
	 * name the class declares or inherits, of any visibility, as
	 * {@link FallbackMethod} searches them.
	 */
	private static void registerFallback(ReflectionHints hints, Method method, String name) {
		for (Method candidate : ReflectionUtils.getUniqueDeclaredMethods(method.getDeclaringClass(),
				(m) -> m.getName().equals(name) && !m.isBridge() && !m.isSynthetic())) {
			hints.registerMethod(candidate, ExecutableMode.INVOKE);
		}
	}

	/** The generic types of the parameters the variables name, and the return type for {@code #result}. */
	private Type[] typesRead(Method method, Set<String> variables) {
		Type[] parameterTypes = method.getGenericParameterTypes();
		@Nullable String @Nullable [] names = this.parameterNames.getParameterNames(method);
		Set<Type> types = new LinkedHashSet<>();
		for (String variable : variables) {
			int parameter = parameter(variable, names, parameterTypes.length);
			if (parameter >= 0) {
				types.add(parameterTypes[parameter]);
			}
			else if (OutcomeSettlement.RESULT.equals(variable)) {
				types.add(method.getGenericReturnType());
			}
		}
		return types.toArray(Type[]::new);
	}

	/** The index of the parameter a variable names, or -1 when it names none. */
	private static int parameter(String variable, @Nullable String @Nullable [] names, int count) {
		if (names != null) {
			for (int i = 0; i < names.length; i++) {
				if (variable.equals(names[i])) {
					return i;
				}
			}
		}
		Matcher index = INDEX.matcher(variable);
		if (index.matches() && index.group(1).length() < 4) {
			int i = Integer.parseInt(index.group(1));
			return (i < count) ? i : -1;
		}
		return -1;
	}

}

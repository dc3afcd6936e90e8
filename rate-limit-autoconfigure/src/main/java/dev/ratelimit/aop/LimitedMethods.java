package dev.ratelimit.aop;

import java.lang.annotation.Annotation;
import java.lang.annotation.AnnotationFormatError;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.annotation.RepeatableContainers;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.RateLimits;
import dev.ratelimit.core.LimitKind;

/**
 * Which methods carry a limit annotation ({@link RateLimited}, {@link RateLimits},
 * {@link CostBudget}, {@link CostBudget.List}, {@link Concurrency}), directly,
 * as a meta-annotation, or on a method they override or implement (superclass
 * or interface): the one answer the pointcut, the start-up scan and the
 * {@code ratelimits} endpoint share, worked out once per class and kept.
 * <p>
 * Most classes of an application carry none, and this finds that cheaply:
 * every type of a class's hierarchy is read once (the annotations its own
 * methods declare, each annotation type looked through once for the limit
 * annotations it carries as meta-annotations), so a class none of whose
 * types declares a limit annotation is rejected with a map lookup, however
 * many beans it backs and however many methods it has. Only the methods of the
 * few classes that do carry one are then matched one by one, exactly as
 * Spring's {@code AnnotationMatchingPointcut} with {@code checkInherited} does
 * (a merged-annotation search of the method's type hierarchy, then of its most
 * specific implementation in the target class), and only for the annotation
 * kinds found in the class: an application that uses only {@code @RateLimited}
 * never searches for the other two.
 * <p>
 * Thread-safe; holds the classes it was asked about for its own lifetime (that
 * of the application context).
 */
public final class LimitedMethods implements AopInfrastructureBean {

	/**
	 * The annotations that declare each kind of limit: the annotation and,
	 * where it repeats, its container. Both are searched as soon as either is
	 * seen, because Spring finds a container on a method as the container but
	 * one carried as a meta-annotation as what it contains.
	 */
	private static final Map<LimitKind, List<Class<? extends Annotation>>> ANNOTATIONS = new EnumMap<>(Map.of(
			LimitKind.RATE_LIMIT, List.of(RateLimited.class, RateLimits.class), LimitKind.BUDGET,
			List.of(CostBudget.class, CostBudget.List.class), LimitKind.CONCURRENCY, List.of(Concurrency.class)));

	private static final Set<LimitKind> NONE = Set.of();

	/** Per annotation type: the kinds it is or carries as meta-annotations. */
	private final Map<Class<? extends Annotation>, Set<LimitKind>> annotationKinds = new ConcurrentHashMap<>();

	/** Per type: the kinds its own declared methods carry. */
	private final Map<Class<?>, Set<LimitKind>> declaredKinds = new ConcurrentHashMap<>();

	/** Per class: the kinds the methods of its whole hierarchy carry. */
	private final Map<Class<?>, Set<LimitKind>> hierarchyKinds = new ConcurrentHashMap<>();

	/** Per method and target class of a class that carries some: whether the method is limited. */
	private final Map<MethodClassKey, Boolean> limited = new ConcurrentHashMap<>();

	/**
	 * Returns whether a method of the class, or of a type it extends or
	 * implements, carries a limit annotation: when not, no method of the class
	 * is limited. Cached per class.
	 * @param type the class
	 * @return whether any of its methods may be limited
	 */
	public boolean mayHaveLimitedMethods(Class<?> type) {
		return !kindsIn(type).isEmpty();
	}

	/**
	 * Returns whether a method called on an instance of {@code targetClass} is
	 * limited: it carries a limit annotation (directly or as a meta-annotation),
	 * or a method it overrides or implements does, or its most specific
	 * implementation in {@code targetClass} does.
	 * @param method the method, possibly of an interface
	 * @param targetClass the class of the target object, or {@code null}
	 * @return whether the method is limited
	 */
	public boolean isLimited(Method method, @Nullable Class<?> targetClass) {
		Set<LimitKind> kinds = kindsIn(method.getDeclaringClass());
		boolean targetSearched = targetClass != null && !Proxy.isProxyClass(targetClass);
		if (targetSearched && targetClass != null) {
			Set<LimitKind> targetKinds = kindsIn(targetClass);
			if (!targetKinds.isEmpty() && !kinds.containsAll(targetKinds)) {
				Set<LimitKind> union = EnumSet.copyOf(targetKinds);
				union.addAll(kinds);
				kinds = union;
			}
		}
		if (kinds.isEmpty()) {
			return false;
		}
		Class<?> target = targetSearched ? targetClass : null;
		MethodClassKey key = new MethodClassKey(method, target);
		Boolean limited = this.limited.get(key);
		if (limited == null) {
			// Not computeIfAbsent with a lambda, here and below: each lambda is one more class spun at
			// start-up, when the auto-proxy creator asks. Two threads racing compute the same answer.
			limited = isLimited(method, target, kinds);
			this.limited.putIfAbsent(key, limited);
		}
		return limited;
	}

	/**
	 * Returns whether a method carries a limit annotation, directly, as a
	 * meta-annotation or on a method it overrides or implements.
	 * @param method the method
	 * @return whether it is annotated
	 */
	public boolean isAnnotated(Method method) {
		return isLimited(method, null);
	}

	/**
	 * The match of {@code AnnotationMatchingPointcut(null, type, true)} for each
	 * kind searched, as the union of those pointcuts matched before.
	 */
	private static boolean isLimited(Method method, @Nullable Class<?> targetClass, Set<LimitKind> kinds) {
		if (carries(method, kinds)) {
			return true;
		}
		if (targetClass == null) {
			return false;
		}
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		return specific != method && carries(specific, kinds);
	}

	private static boolean carries(Method method, Set<LimitKind> kinds) {
		for (LimitKind kind : kinds) {
			List<Class<? extends Annotation>> types = Objects.requireNonNull(ANNOTATIONS.get(kind), "every kind");
			for (Class<? extends Annotation> type : types) {
				if (AnnotatedElementUtils.hasAnnotation(method, type)) {
					return true;
				}
			}
		}
		return false;
	}

	/** The kinds declared anywhere in the hierarchy of a class: its superclasses and all its interfaces. */
	private Set<LimitKind> kindsIn(Class<?> type) {
		Set<LimitKind> kinds = this.hierarchyKinds.get(type);
		if (kinds == null) {
			kinds = collectKinds(type);
			this.hierarchyKinds.putIfAbsent(type, kinds);
		}
		return kinds;
	}

	private Set<LimitKind> collectKinds(Class<?> type) {
		Set<LimitKind> kinds = null;
		for (Class<?> current = type; current != null; current = current.getSuperclass()) {
			kinds = add(kinds, declared(current));
		}
		for (Class<?> implemented : ClassUtils.getAllInterfacesForClassAsSet(type)) {
			kinds = add(kinds, declared(implemented));
		}
		return (kinds != null) ? kinds : NONE;
	}

	private static @Nullable Set<LimitKind> add(@Nullable Set<LimitKind> kinds, Set<LimitKind> more) {
		if (more.isEmpty()) {
			return kinds;
		}
		Set<LimitKind> union = (kinds != null) ? kinds : EnumSet.noneOf(LimitKind.class);
		union.addAll(more);
		return union;
	}

	/** The kinds the methods a type declares itself carry, directly or as meta-annotations. */
	private Set<LimitKind> declared(Class<?> type) {
		// The JDK's own types carry none of ours (Spring's annotation search skips them too).
		if (type.getName().startsWith("java.")) {
			return NONE;
		}
		Set<LimitKind> kinds = this.declaredKinds.get(type);
		if (kinds == null) {
			kinds = readDeclared(type);
			this.declaredKinds.putIfAbsent(type, kinds);
		}
		return kinds;
	}

	private Set<LimitKind> readDeclared(Class<?> type) {
		Set<LimitKind> kinds = EnumSet.noneOf(LimitKind.class);
		// Spring's cache of declared methods, which the auto-proxy creator has filled for this class already.
		for (Method method : ReflectionUtils.getDeclaredMethods(type)) {
			for (Annotation annotation : declaredAnnotations(method)) {
				kinds.addAll(kindsOf(annotation.annotationType()));
			}
		}
		return kinds.isEmpty() ? NONE : kinds;
	}

	private static Annotation[] declaredAnnotations(Method method) {
		try {
			return method.getDeclaredAnnotations();
		}
		catch (RuntimeException | LinkageError | AnnotationFormatError ex) {
			// Unreadable annotations: Spring's annotation search, which the pointcut used, ignores them too.
			return new Annotation[0];
		}
	}

	private Set<LimitKind> kindsOf(Class<? extends Annotation> annotationType) {
		Set<LimitKind> kinds = this.annotationKinds.get(annotationType);
		if (kinds == null) {
			kinds = readKinds(annotationType);
			this.annotationKinds.putIfAbsent(annotationType, kinds);
		}
		return kinds;
	}

	/** The kinds an annotation type is, or carries at any depth of its meta-annotations. */
	private static Set<LimitKind> readKinds(Class<? extends Annotation> annotationType) {
		LimitKind itself = kindOf(annotationType);
		if (itself != null) {
			return EnumSet.of(itself);
		}
		if (annotationType.getName().startsWith("java.")) {
			return NONE;
		}
		Set<LimitKind> kinds = null;
		for (MergedAnnotation<Annotation> meta : MergedAnnotations
			.from(annotationType, SearchStrategy.DIRECT, RepeatableContainers.none())) {
			LimitKind kind = kindOf(meta.getType());
			if (kind != null) {
				kinds = add(kinds, EnumSet.of(kind));
			}
		}
		return (kinds != null) ? kinds : NONE;
	}

	private static @Nullable LimitKind kindOf(Class<?> annotationType) {
		for (Map.Entry<LimitKind, List<Class<? extends Annotation>>> kind : ANNOTATIONS.entrySet()) {
			if (kind.getValue().contains(annotationType)) {
				return kind.getKey();
			}
		}
		return null;
	}

}

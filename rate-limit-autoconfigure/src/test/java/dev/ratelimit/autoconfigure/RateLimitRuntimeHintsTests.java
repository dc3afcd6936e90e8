package dev.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.aop.SpringProxy;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.annotation.Reflective;
import org.springframework.aot.hint.annotation.ReflectiveRuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.DecoratingProxy;
import org.springframework.core.annotation.AliasFor;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.javapoet.ClassName;
import org.springframework.util.ClassUtils;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.actuate.RateLimitEndpoint;
import dev.ratelimit.aop.LimitPointcut;
import dev.ratelimit.aop.LimitedMethodReflectiveProcessor;
import dev.ratelimit.aop.LimitedMethods;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.key.KeyContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The run-time hints a native image of an application using the starter needs,
 * checked as Spring's AOT processing registers them: the registrars listed in
 * {@code META-INF/spring/aot.factories}, and the {@code @Reflective} processing
 * of the beans whose methods carry a limit annotation. What the hints must
 * cover is read from the starter itself (its script files, its annotation
 * types, the classes it looks up by name, the endpoint's records), so a new one
 * without a hint fails here.
 */
class RateLimitRuntimeHintsTests {

	/** Where the starter's own classes and resources were loaded from, not the tests'. */
	private static final String MAIN = RateLimitRuntimeHints.class.getProtectionDomain()
		.getCodeSource()
		.getLocation()
		.toString();

	private final RuntimeHints hints = registeredByAotFactories();

	@Test
	void theRegistrarsAreListedInAotFactories() {
		assertThat(AotServices.factories().load(RuntimeHintsRegistrar.class).asList())
			.extracting((registrar) -> registrar.getClass().getName())
			.contains(RateLimitRuntimeHints.class.getName(), "dev.ratelimit.actuate.RateLimitEndpointRuntimeHints");
	}

	@Test
	void everyLuaScriptIsAResource() throws IOException {
		List<String> scripts = new ArrayList<>();
		for (Resource script : mainResources("META-INF/scripts/*.lua")) {
			scripts.add("META-INF/scripts/" + script.getFilename());
		}
		assertThat(scripts).contains("META-INF/scripts/lib.lua", "META-INF/scripts/batch.lua",
				"META-INF/scripts/token_bucket.lua");
		for (String script : scripts) {
			assertThat(RuntimeHintsPredicates.resource().forResource(script)).as(script).accepts(this.hints);
		}
		assertThat(RuntimeHintsPredicates.resource().forResource("META-INF/scripts/notes.txt")).rejects(this.hints);
	}

	@Test
	void expressionsCanCallEveryPublicMethodOfTheirRootObject() {
		List<Method> methods = Arrays.stream(KeyContext.class.getDeclaredMethods())
			.filter((method) -> Modifier.isPublic(method.getModifiers()) && !method.isSynthetic())
			.toList();
		assertThat(methods).extracting(Method::getName).contains("header", "getIp", "getPrincipal", "getGlobal");
		for (Method method : methods) {
			assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(method)).as(method.toString())
				.accepts(this.hints);
		}
	}

	@Test
	void everyAnnotationOfTheStarterCanBeReadAndSynthesized() throws Exception {
		List<Class<?>> annotations = new ArrayList<>();
		for (Resource type : mainResources("dev/ratelimit/*.class")) {
			Class<?> candidate = ClassUtils.forName(className(type), getClass().getClassLoader());
			if (candidate.isAnnotation()) {
				annotations.add(candidate);
			}
		}
		assertThat(annotations).contains(RateLimited.class, CostBudget.class, CostBudget.List.class,
				Concurrency.class);
		for (Class<?> annotation : annotations) {
			for (Method attribute : annotation.getDeclaredMethods()) {
				assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(attribute))
					.as(attribute.toString())
					.accepts(this.hints);
			}
			if (hasAliases(annotation)) {
				assertThat(RuntimeHintsPredicates.proxies().forInterfaces(annotation)).as(annotation.getName())
					.accepts(this.hints);
			}
			// Spring's AOT processing of beans finds what the annotated methods need through it.
			Reflective reflective = annotation.getAnnotation(Reflective.class);
			assertThat(reflective).as(annotation.getName()).isNotNull();
			assertThat(reflective.value()).containsExactly(LimitedMethodReflectiveProcessor.class);
		}
	}

	@Test
	void everyClassLookedUpByNameIsRegistered() throws IOException {
		Set<String> names = namesLookedUp();
		assertThat(names).contains("reactor.core.publisher.Mono", "io.lettuce.core.RedisClient",
				"org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration");
		assertThat(RateLimitRuntimeHints.LOOKED_UP).containsAll(names);
		for (String name : names) {
			if (ClassUtils.isPresent(name, getClass().getClassLoader())) {
				assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of(name))).as(name)
					.accepts(this.hints);
			}
		}
	}

	@Test
	void everyEndpointResponseCanBeWritten() {
		List<Class<?>> records = Arrays.stream(RateLimitEndpoint.class.getDeclaredClasses())
			.filter(Class::isRecord)
			.toList();
		assertThat(records).contains(RateLimitEndpoint.PoliciesDescriptor.class, RateLimitEndpoint.TopKey.class,
				RateLimitEndpoint.BudgetWindowState.class, RateLimitEndpoint.UnavailableKeyState.class);
		for (Class<?> type : records) {
			assertThat(RuntimeHintsPredicates.reflection().onType(type)).as(type.getName()).accepts(this.hints);
			for (RecordComponent component : type.getRecordComponents()) {
				assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(component.getAccessor()))
					.as(type.getSimpleName() + "." + component.getName())
					.accepts(this.hints);
			}
		}
	}

	@Test
	void theFailureAnalyzerOfSpringFactoriesCanBeCreated() throws Exception {
		// Spring's own registrar covers what spring.factories lists: the starter adds nothing for it.
		assertThat(RuntimeHintsPredicates.reflection()
			.onConstructorInvocation(RateLimitConfigurationFailureAnalyzer.class.getDeclaredConstructor()))
			.accepts(this.hints);
	}

	@Test
	void aLimitedMethodIsInvocableWithItsFallbacksAndTheTypesItsExpressionsRead() throws Exception {
		RuntimeHints beans = new RuntimeHints();
		new ReflectiveRuntimeHintsRegistrar().registerRuntimeHints(beans, Chats.class);
		Method chat = Chats.class.getMethod("chat", String.class, ChatRequest.class, Audit.class);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(chat)).accepts(beans);
		for (Method busy : List.of(Chats.class.getDeclaredMethod("busy", String.class, ChatRequest.class),
				Chats.class.getDeclaredMethod("busy", String.class, ChatRequest.class, RateLimitException.class))) {
			assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(busy)).as(busy.toString()).accepts(beans);
		}
		// #request.maxTokens and #result.usage.costUsd: the argument's and the result's properties, to any depth.
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(ChatRequest.class.getMethod("maxTokens")))
			.accepts(beans);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Reply.class.getMethod("usage")))
			.accepts(beans);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Usage.class.getMethod("costUsd")))
			.accepts(beans);
		// An argument no expression reads is left alone.
		assertThat(RuntimeHintsPredicates.reflection().onType(Audit.class)).rejects(beans);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Chats.class.getMethod("unlimited")))
			.rejects(beans);
	}

	@Test
	void repeatedComposedAndInheritedAnnotationsAreFoundToo() throws Exception {
		RuntimeHints beans = new RuntimeHints();
		new ReflectiveRuntimeHintsRegistrar().registerRuntimeHints(beans, Chats.class, Orders.class);
		Method twice = Chats.class.getMethod("twice", Tenant.class);
		Method composed = Chats.class.getMethod("composed", Order.class);
		Method implemented = Orders.class.getMethod("cancel", Order.class);
		Method declared = OrderApi.class.getMethod("cancel", Order.class);
		for (Method method : List.of(twice, composed, implemented, declared)) {
			assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(method)).as(method.toString())
				.accepts(beans);
		}
		// #p0 names an argument by its index, as #a0 does.
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Tenant.class.getMethod("id")))
			.accepts(beans);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Order.class.getMethod("customer")))
			.accepts(beans);
	}

	@Test
	void aotProcessingOfAnApplicationRegistersTheStartersHintsAndItsLimitedBeans() throws Exception {
		GenericApplicationContext context = new GenericApplicationContext();
		AopConfigUtils.registerAutoProxyCreatorIfNecessary(context);
		RootBeanDefinition advisor = new RootBeanDefinition(NoLimitAdvisor.class);
		advisor.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
		context.registerBeanDefinition("limitAdvisor", advisor);
		context.registerBeanDefinition("orders", new RootBeanDefinition(Orders.class));
		DefaultGenerationContext generation = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get(getClass())), new InMemoryGeneratedFiles());
		new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
		RuntimeHints processed = generation.getRuntimeHints();
		// The registrars of aot.factories.
		assertThat(RuntimeHintsPredicates.resource().forResource("META-INF/scripts/lib.lua")).accepts(processed);
		// The bean's limited method, through @Reflective.
		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(Orders.class.getMethod("cancel", Order.class))).accepts(processed);
		// Spring registers the JDK proxy of a bean proxied through its interfaces (Spring Boot proxies classes
		// unless told otherwise): the starter adds none of its own.
		assertThat(RuntimeHintsPredicates.proxies()
			.forInterfaces(OrderApi.class, SpringProxy.class, Advised.class, DecoratingProxy.class))
			.accepts(processed);
	}

	private static RuntimeHints registeredByAotFactories() {
		RuntimeHints hints = new RuntimeHints();
		AotServices.factories()
			.load(RuntimeHintsRegistrar.class)
			.forEach((registrar) -> registrar.registerHints(hints, RateLimitRuntimeHintsTests.class.getClassLoader()));
		return hints;
	}

	/** The starter's own resources matching a pattern, not those of the tests or of other jars. */
	private static List<Resource> mainResources(String pattern) throws IOException {
		List<Resource> found = new ArrayList<>();
		for (Resource resource : new PathMatchingResourcePatternResolver().getResources("classpath*:" + pattern)) {
			if (resource.getURL().toString().startsWith(MAIN)) {
				found.add(resource);
			}
		}
		return found;
	}

	private static String className(Resource type) throws IOException {
		String path = type.getURL().toString().substring(MAIN.length());
		return path.substring(0, path.length() - ".class".length()).replace('/', '.');
	}

	private static boolean hasAliases(Class<?> annotation) {
		return Arrays.stream(annotation.getDeclaredMethods()).anyMatch((m) -> m.isAnnotationPresent(AliasFor.class));
	}

	/**
	 * The class names the starter's code passes to {@code ClassUtils.isPresent}:
	 * the text constant loaded last before each call (a constant's value is
	 * inlined where it is used).
	 */
	private static Set<String> namesLookedUp() throws IOException {
		Set<String> names = new TreeSet<>();
		for (Resource type : mainResources("dev/ratelimit/**/*.class")) {
			if (type.getFilename() != null && type.getFilename().endsWith("RuntimeHints.class")) {
				// The registrars run while the image is built, not in it.
				continue;
			}
			try (InputStream in = type.getInputStream()) {
				new ClassReader(in).accept(new ClassVisitor(SpringAsmInfo.ASM_VERSION) {

					@Override
					public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
							String[] exceptions) {
						return new IsPresentCalls(names);
					}

				}, ClassReader.SKIP_DEBUG);
			}
		}
		return names;
	}

	private static final class IsPresentCalls extends MethodVisitor {

		private final Set<String> names;

		private @Nullable String text;

		IsPresentCalls(Set<String> names) {
			super(SpringAsmInfo.ASM_VERSION);
			this.names = names;
		}

		@Override
		public void visitLdcInsn(Object value) {
			if (value instanceof String constant) {
				this.text = constant;
			}
		}

		@Override
		public void visitMethodInsn(int opcode, String owner, String name, String descriptor, boolean isInterface) {
			if ("org/springframework/util/ClassUtils".equals(owner) && "isPresent".equals(name)) {
				assertThat(this.text).as("the class name passed to ClassUtils.isPresent").isNotNull();
				this.names.add(this.text);
			}
		}

	}

	record ChatRequest(int maxTokens) {
	}

	record Reply(Usage usage) {
	}

	record Usage(BigDecimal costUsd) {
	}

	record Audit(String who) {
	}

	record Tenant(String id) {
	}

	record Order(String customer) {
	}

	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.METHOD)
	@Concurrency(permits = "1", key = "#order.customer")
	@interface OnePerCustomer {

	}

	static class Chats {

		@CostBudget(value = "tenant-daily", key = "#tenant", estimate = "#request.maxTokens * 0.000002",
				actual = "#result.usage.costUsd", fallback = "busy")
		public Reply chat(String tenant, ChatRequest request, Audit audit) {
			return new Reply(new Usage(BigDecimal.ONE));
		}

		Reply busy(String tenant, ChatRequest request) {
			return new Reply(new Usage(BigDecimal.ZERO));
		}

		private Reply busy(String tenant, ChatRequest request, RateLimitException refusal) {
			return new Reply(new Usage(BigDecimal.ZERO));
		}

		@RateLimited(key = "#p0.id", capacity = "1", refill = "1/1s")
		@RateLimited(key = "global", capacity = "100", refill = "100/1s")
		public void twice(Tenant tenant) {
		}

		@OnePerCustomer
		public void composed(Order order) {
		}

		public void unlimited() {
		}

	}

	interface OrderApi {

		@RateLimited(key = "#order.customer", capacity = "1", refill = "1/1s")
		void cancel(Order order);

	}

	static class Orders implements OrderApi {

		@Override
		public void cancel(Order order) {
		}

	}

	/** The starter's pointcut, with advice that only proceeds: what proxies a bean is the pointcut. */
	static class NoLimitAdvisor extends DefaultPointcutAdvisor {

		NoLimitAdvisor() {
			super(new LimitPointcut(new LimitedMethods()), (MethodInterceptor) MethodInvocation::proceed);
		}

	}

}

package dev.ratelimit;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.Handle;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No class of the starter calls a JDK method that can resolve a host name. The
 * client address comes from request headers a caller writes; a lookup on it
 * would let any caller make the application query DNS on the request thread.
 * <p>
 * The check reads the bytecode of every class compiled from the main sources,
 * so it holds on every JDK, and for code paths no test reaches. What it cannot
 * see: calls through reflection, and lookups inside other libraries.
 */
class NoNameResolutionTests {

	@Test
	void noClassOfTheStarterCallsANameResolvingMethod() throws IOException, URISyntaxException {
		Path classes = Path.of(RateLimited.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		List<Path> scanned = new ArrayList<>();
		List<String> calls = new ArrayList<>();
		try (Stream<Path> files = Files.walk(classes.resolve("dev/ratelimit"))) {
			for (Path file : files.filter((f) -> f.toString().endsWith(".class")).toList()) {
				scanned.add(file);
				calls.addAll(resolvingCalls(Files.readAllBytes(file)));
			}
		}
		assertThat(scanned).as("classes scanned").hasSizeGreaterThan(100)
			.anySatisfy((file) -> assertThat(file).hasFileName("IpAddresses.class"));
		assertThat(calls).isEmpty();
	}

	@Test
	void theScanFindsACallAndAMethodReference() throws IOException {
		assertThat(resolvingCalls(bytecode(Offender.class))).containsExactlyInAnyOrder(
				"dev/ratelimit/NoNameResolutionTests$Offender.lookUp calls java/net/InetAddress.getByName",
				"dev/ratelimit/NoNameResolutionTests$Offender.lookUp calls java/net/InetAddress.getCanonicalHostName",
				"dev/ratelimit/NoNameResolutionTests$Offender.connect calls java/net/InetSocketAddress.<init>",
				"dev/ratelimit/NoNameResolutionTests$Offender.resolver refers to java/net/InetAddress.getAllByName");
	}

	private static byte[] bytecode(Class<?> type) throws IOException {
		try (InputStream in = type.getClassLoader().getResourceAsStream(type.getName().replace('.', '/') + ".class")) {
			return in.readAllBytes();
		}
	}

	private static List<String> resolvingCalls(byte[] bytecode) {
		List<String> found = new ArrayList<>();
		ClassReader reader = new ClassReader(bytecode);
		String className = reader.getClassName();
		reader.accept(new ClassVisitor(Opcodes.ASM9) {

			@Override
			public MethodVisitor visitMethod(int access, String method, String descriptor, String signature,
					String[] exceptions) {
				String where = className + "." + method;
				return new MethodVisitor(Opcodes.ASM9) {

					@Override
					public void visitMethodInsn(int opcode, String owner, String name, String desc, boolean itf) {
						if (resolves(owner, name, desc)) {
							found.add(where + " calls " + owner + "." + name);
						}
					}

					@Override
					public void visitInvokeDynamicInsn(String name, String desc, Handle bootstrap, Object... args) {
						for (Object arg : args) {
							if (arg instanceof Handle handle
									&& resolves(handle.getOwner(), handle.getName(), handle.getDesc())) {
								found.add(where + " refers to " + handle.getOwner() + "." + handle.getName());
							}
						}
					}

				};
			}

		}, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
		return found;
	}

	/**
	 * Whether a JDK method may look a name up: forward (a host name, or a
	 * literal the JDK does not accept as one) or reverse (an address to a name).
	 */
	private static boolean resolves(String owner, String name, String descriptor) {
		return switch (owner) {
			case "java/net/InetAddress", "java/net/Inet4Address", "java/net/Inet6Address" -> switch (name) {
				case "getByName", "getAllByName", "getLocalHost", "getHostName", "getCanonicalHostName",
						"isReachable" -> true;
				default -> false;
			};
			// new InetSocketAddress(String, int) resolves; createUnresolved does not.
			case "java/net/InetSocketAddress" -> (name.equals("<init>") && descriptor.startsWith("(Ljava/lang/String;"))
					|| name.equals("getHostName");
			// URL equality and hashing resolve the host.
			case "java/net/URL" -> name.equals("equals") || name.equals("hashCode") || name.equals("sameFile");
			case "java/net/Socket" -> name.equals("<init>") && descriptor.startsWith("(Ljava/lang/String;");
			default -> false;
		};
	}

	/** Never run: the scan's own test reads its bytecode. */
	static final class Offender {

		String lookUp(String host) throws IOException {
			return InetAddress.getByName(host).getCanonicalHostName();
		}

		Object connect(String host) {
			return new java.net.InetSocketAddress(host, 80);
		}

		Lookup resolver() {
			return InetAddress::getAllByName;
		}

		interface Lookup {

			Object find(String host) throws IOException;

		}

	}

}

package dev.ratelimit.benchmarks;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

/**
 * Copies of a Spring Boot executable jar with the starter taken out or put in,
 * for the start-up benchmarks.
 * <p>
 * {@link #without(Path)}: the sample app's jar as it would be without the
 * starter: the jars only the starter brings removed from {@code BOOT-INF/lib}
 * (and from the class-path and layer indexes), so that the app starts with
 * the rest of its dependencies exactly as built.
 * <p>
 * One jar cannot go: the sample app's own classes name the starter's
 * annotations ({@code @RateLimited}, {@code @CostBudget}) and types
 * ({@code ProviderClients}, {@code BudgetMeter}), and a class naming a type
 * that is missing fails to load (Spring resolving {@code ObjectProvider<ProviderClients>}
 * throws {@code TypeNotPresentException}). So {@code rate-limit-autoconfigure}
 * stays on the class path with what makes it part of an application removed:
 * its auto-configuration registrations ({@code META-INF/spring/*.imports}) and
 * its {@code META-INF/spring.factories}. None of its code runs; what remains
 * is the cost of a jar on the class path and of loading the few annotation
 * classes the sample's methods carry, which this variant counts as the app's own.
 * <p>
 * Which jars come with the starter alone was read off
 * {@code mvn dependency:tree -pl sample-app}: everything below
 * {@code rate-limit-spring-boot-starter} that no other dependency of the
 * sample app brings. Each must be found exactly once, so a change of the
 * starter's dependencies fails this class instead of measuring something else.
 * <p>
 * {@link #with(Path, Path)}: the other way round, an application built without
 * the starter (Spring PetClinic, say) with the starter's jars added, taken from
 * the sample app's jar, those the application already has (AspectJ, Caffeine)
 * left as they are: what adding the dependency to its build would give, as
 * long as it uses the same Spring Boot version.
 * <p>
 * {@link #plus(Path, List, String)}: the same for another library's jars,
 * given as files (Bucket4j's starter, {@link Bucket4jStarter}).
 */
final class StarterJars {

	/** File name prefixes, in {@code BOOT-INF/lib}, of the jars only the starter brings. */
	static final List<String> REMOVED = List.of("rate-limit-spring-boot-starter-", "aspectjweaver-", "caffeine-",
			"error_prone_annotations-", "resilience4j-bulkhead-",
			"resilience4j-core-");

	/** The jar that stays, with its registrations removed. */
	static final String DEACTIVATED = "rate-limit-autoconfigure-";

	private static final String LIB = "BOOT-INF/lib/";

	private StarterJars() {
	}

	/**
	 * Writes a copy without the starter into a temporary file, deleted when this JVM exits.
	 * @param appJar the sample app's executable jar, with the starter
	 * @return the copy without it
	 * @throws IllegalStateException if a jar to remove or deactivate is not in {@code appJar} exactly once
	 */
	static Path without(Path appJar) {
		try {
			Path copy = Files.createTempFile("benchmark-sample-app-without-starter-", ".jar");
			copy.toFile().deleteOnExit();
			Map<String, Integer> found = new LinkedHashMap<>();
			REMOVED.forEach((prefix) -> found.put(prefix, 0));
			found.put(DEACTIVATED, 0);
			try (ZipFile source = new ZipFile(appJar.toFile());
					ZipOutputStream target = new ZipOutputStream(Files.newOutputStream(copy))) {
				for (ZipEntry entry : source.stream().toList()) {
					String prefix = libraryPrefix(entry.getName());
					if (prefix != null) {
						found.merge(prefix, 1, Integer::sum);
					}
					if (prefix != null && !prefix.equals(DEACTIVATED)) {
						continue;
					}
					try (InputStream in = source.getInputStream(entry)) {
						if (DEACTIVATED.equals(prefix)) {
							writeStored(target, entry.getName(), deactivated(in.readAllBytes()));
						}
						else if (entry.getName().startsWith("BOOT-INF/") && entry.getName().endsWith(".idx")) {
							writeDeflated(target, entry.getName(), withoutRemovedJars(in.readAllBytes()));
						}
						else {
							copy(entry, in, target);
						}
					}
				}
			}
			found.forEach((prefix, count) -> {
				if (count != 1) {
					throw new IllegalStateException(appJar + " holds " + count + " " + LIB + prefix
							+ "*.jar; the list of jars the starter brings (StarterJars) needs updating");
				}
			});
			return copy;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot write a copy of " + appJar + " without the starter", ex);
		}
	}

	/**
	 * Writes a copy of an application's jar with the starter's jars added into a
	 * temporary file, deleted when this JVM exits.
	 * @param appJar an executable jar built without the starter
	 * @param donor the sample app's executable jar, whose copies of the starter's jars are added
	 * @return the copy with the starter
	 * @throws IllegalStateException if {@code appJar} already has the starter, or {@code donor} lacks one of its jars
	 */
	static Path with(Path appJar, Path donor) {
		try {
			Path copy = Files.createTempFile("benchmark-app-with-starter-", ".jar");
			copy.toFile().deleteOnExit();
			try (ZipFile source = new ZipFile(appJar.toFile());
					ZipFile starter = new ZipFile(donor.toFile());
					ZipOutputStream target = new ZipOutputStream(Files.newOutputStream(copy))) {
				List<String> present = source.stream()
					.map((entry) -> libraryPrefix(entry.getName()))
					.filter((prefix) -> prefix != null)
					.toList();
				if (present.contains(DEACTIVATED)) {
					throw new IllegalStateException(appJar + " has the starter already");
				}
				List<ZipEntry> added = new ArrayList<>();
				for (ZipEntry entry : starter.stream().toList()) {
					String prefix = libraryPrefix(entry.getName());
					if (prefix != null && !present.contains(prefix)) {
						added.add(entry);
					}
				}
				if (added.stream().noneMatch((entry) -> DEACTIVATED.equals(libraryPrefix(entry.getName())))) {
					throw new IllegalStateException(donor + " has no " + LIB + DEACTIVATED + "*.jar");
				}
				copyIndexing(source, target, added.stream().map(ZipEntry::getName).toList());
				for (ZipEntry jar : added) {
					try (InputStream in = starter.getInputStream(jar)) {
						copy(jar, in, target);
					}
				}
			}
			return copy;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot write a copy of " + appJar + " with the starter", ex);
		}
	}

	/**
	 * Writes a copy of an executable jar with library jars added, those it
	 * already has by file name left as they are, into a temporary file deleted
	 * when this JVM exits: as {@link #with(Path, Path)} adds ours, stored
	 * uncompressed in {@code BOOT-INF/lib} and named in the class-path index.
	 * @param appJar an executable jar
	 * @param libraries the jar files to add to its {@code BOOT-INF/lib} and class-path index
	 * @param what what the libraries are, for the temporary file's name and error messages
	 * @return the copy
	 */
	static Path plus(Path appJar, List<Path> libraries, String what) {
		try {
			Path copy = Files.createTempFile("benchmark-app-with-" + what + "-", ".jar");
			copy.toFile().deleteOnExit();
			try (ZipFile source = new ZipFile(appJar.toFile());
					ZipOutputStream target = new ZipOutputStream(Files.newOutputStream(copy))) {
				List<String> present = source.stream().map(ZipEntry::getName).toList();
				List<Path> added = libraries.stream()
					.filter((jar) -> !present.contains(LIB + jar.getFileName()))
					.toList();
				copyIndexing(source, target, added.stream().map((jar) -> LIB + jar.getFileName()).toList());
				for (Path jar : added) {
					writeStored(target, LIB + jar.getFileName(), Files.readAllBytes(jar));
				}
			}
			return copy;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot write a copy of " + appJar + " with " + what, ex);
		}
	}

	/** Copies every entry of {@code source}, the class-path index with a line for each jar added. */
	private static void copyIndexing(ZipFile source, ZipOutputStream target, List<String> added) throws IOException {
		for (ZipEntry entry : source.stream().toList()) {
			try (InputStream in = source.getInputStream(entry)) {
				if (entry.getName().equals("BOOT-INF/classpath.idx")) {
					StringBuilder index = new StringBuilder(new String(in.readAllBytes(), StandardCharsets.UTF_8));
					for (String jar : added) {
						index.append("- \"").append(jar).append("\"\n");
					}
					writeDeflated(target, entry.getName(), index.toString().getBytes(StandardCharsets.UTF_8));
				}
				else {
					copy(entry, in, target);
				}
			}
		}
	}

	private static String libraryPrefix(String name) {
		if (!name.startsWith(LIB) || !name.endsWith(".jar")) {
			return null;
		}
		String file = name.substring(LIB.length());
		if (file.startsWith(DEACTIVATED)) {
			return DEACTIVATED;
		}
		return REMOVED.stream().filter(file::startsWith).findFirst().orElse(null);
	}

	/** The jar without the files that make Spring Boot apply it. */
	private static byte[] deactivated(byte[] jar) throws IOException {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream(jar.length);
		try (ZipInputStream in = new ZipInputStream(new java.io.ByteArrayInputStream(jar));
				ZipOutputStream out = new ZipOutputStream(bytes)) {
			for (ZipEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
				String name = entry.getName();
				if (name.startsWith("META-INF/spring/") || name.equals("META-INF/spring.factories")) {
					continue;
				}
				out.putNextEntry(new ZipEntry(name));
				in.transferTo(out);
				out.closeEntry();
			}
		}
		return bytes.toByteArray();
	}

	/** The class-path and layer indexes without the lines naming a removed jar. */
	private static byte[] withoutRemovedJars(byte[] index) {
		StringBuilder kept = new StringBuilder();
		for (String line : new String(index, StandardCharsets.UTF_8).split("\n", -1)) {
			if (REMOVED.stream().noneMatch((prefix) -> line.contains(LIB + prefix))) {
				kept.append(line).append('\n');
			}
		}
		kept.setLength(kept.length() - 1);
		return kept.toString().getBytes(StandardCharsets.UTF_8);
	}

	private static void copy(ZipEntry entry, InputStream in, ZipOutputStream target) throws IOException {
		ZipEntry copy = new ZipEntry(entry);
		if (copy.getMethod() == ZipEntry.DEFLATED) {
			// Compressed again by the stream, maybe to another size.
			copy.setCompressedSize(-1);
		}
		target.putNextEntry(copy);
		in.transferTo(target);
		target.closeEntry();
	}

	/** Nested jars must be stored uncompressed for Spring Boot's launcher to open them in place. */
	private static void writeStored(ZipOutputStream target, String name, byte[] content) throws IOException {
		ZipEntry entry = new ZipEntry(name);
		entry.setMethod(ZipEntry.STORED);
		entry.setSize(content.length);
		entry.setCompressedSize(content.length);
		CRC32 crc = new CRC32();
		crc.update(content);
		entry.setCrc(crc.getValue());
		target.putNextEntry(entry);
		target.write(content);
		target.closeEntry();
	}

	private static void writeDeflated(ZipOutputStream target, String name, byte[] content) throws IOException {
		target.putNextEntry(new ZipEntry(name));
		target.write(content);
		target.closeEntry();
	}

	/**
	 * The jars this module's build copied into a directory of {@code benchmarks/target} (another library's
	 * starter and what it needs), looked for beside the directory holding this benchmark's jar and under the
	 * working directory.
	 * @param directory the directory's name in {@code benchmarks/target}
	 * @param what what they are, for the failure's message
	 * @return the jars, in name order
	 * @throws IllegalStateException if there are none
	 */
	static List<Path> copied(String directory, String what) {
		List<Path> candidates = new ArrayList<>();
		try {
			Path codeSource = Path.of(StarterJars.class.getProtectionDomain().getCodeSource().getLocation().toURI());
			// benchmarks/target/benchmarks.jar or benchmarks/target/classes: the directory is beside either.
			candidates.add(codeSource.resolveSibling(directory));
		}
		catch (URISyntaxException | RuntimeException ex) {
			// no code source: the working directory only
		}
		candidates.add(Path.of("benchmarks", "target", directory).toAbsolutePath());
		for (Path candidate : candidates) {
			if (Files.isDirectory(candidate)) {
				try (Stream<Path> files = Files.list(candidate)) {
					List<Path> jars = files.filter((file) -> file.getFileName().toString().endsWith(".jar")).sorted().toList();
					if (!jars.isEmpty()) {
						return jars;
					}
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			}
		}
		throw new IllegalStateException("No " + what + " jars in " + candidates
				+ "; build them with: mvn -q -pl benchmarks package -DskipTests");
	}

}

package dev.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.Algorithm;

/**
 * Composes the Lua scripts shipped in {@code META-INF/scripts} two ways, see
 * {@code lib.lua}: each script as one text for {@code EVALSHA} (the shared
 * {@code lib.lua}, the algorithms it needs, then its driver), and all of them
 * as one function library for {@code FCALL}, where the shared code runs once
 * at {@code FUNCTION LOAD} rather than on every call. Either way a decision
 * is one call, however many policies and algorithms it involves.
 * <p>
 * The library is named after a hash of its text,
 * {@code ratelimit_<hash>}, and so are its functions: instances running
 * different versions of the starter against one Redis each call their own,
 * and loading one never replaces another's.
 */
final class LuaScripts {

	private static final String LOCATION = "META-INF/scripts/";

	/** The algorithms, each registering itself with {@code lib.lua}'s table. */
	private static final List<String> ALGORITHMS = List.of("token_bucket.lua", "leaky_bucket.lua",
			"leaky_bucket_shaping.lua", "fixed_window.lua", "sliding_window_log.lua", "sliding_window_counter.lua");

	private static final String LIB = read("lib.lua");

	private static final String ALL_ALGORITHMS = algorithms();

	private static final List<LibDefinition> LIB_DEFINITIONS = libDefinitions();

	/** The drivers, each a function of the library, and what each needs before it. */
	private static final List<Driver> DRIVERS = List.of(new Driver("decide", Prelude.ALGORITHMS, List.class),
			new Driver("decide_token_bucket", Prelude.TOKEN_BUCKET, List.class),
			new Driver("refund", Prelude.ALGORITHMS, List.class), new Driver("budget", Prelude.LIB, List.class),
			new Driver("semaphore", Prelude.LIB, List.class), new Driver("pause", Prelude.NONE, Long.class),
			new Driver("pause_remaining", Prelude.NONE, Long.class),
			new Driver("override_put", Prelude.NONE, Long.class),
			new Driver("override_remove", Prelude.NONE, Long.class));

	/** The drivers a batch may call ({@code batch.lua}): the decisions of every kind of limit. */
	private static final List<String> BATCHED = List.of("decide", "decide_token_bucket", "refund", "budget",
			"semaphore");

	/** The library's body with {@link #NAME_MARK} where its hash goes. */
	private static final String NAME_MARK = "@@";

	private static final String BODY = body();

	private static final String LIBRARY_NAME = "ratelimit_"
			+ new DefaultRedisScript<>(BODY, Object.class).getSha1().substring(0, 16);

	private static final String LIBRARY = "#!lua name=" + LIBRARY_NAME + "\n" + BODY.replace(NAME_MARK, LIBRARY_NAME);

	/** Every driver's script, composed once: by name. */
	private static final Map<String, LimiterScript<?>> SCRIPTS = scripts();

	private static final LimiterScript<List<Object>> DECIDE = script("decide");

	private static final LimiterScript<List<Object>> DECIDE_TOKEN_BUCKET = script("decide_token_bucket");

	private static final Map<Algorithm, LimiterScript<List<Object>>> DECIDE_ONE = decideOne();

	private static final LimiterScript<List<Object>> BATCH = composeBatch();

	/** The functions of the drivers a batch may call, each with its driver's name as {@code batch.lua} takes it. */
	private static final Map<String, byte[]> BATCHED_DRIVERS = batchedDrivers();

	private LuaScripts() {
	}

	/**
	 * Returns the script that decides several policies all or nothing, see
	 * {@code decide.lua}.
	 * @return the script
	 */
	static LimiterScript<List<Object>> decide() {
		return DECIDE;
	}

	/**
	 * Returns the decide script whose {@code EVALSHA} text has one algorithm only.
	 * Redis runs a script's whole text on every call, defining every function in
	 * it, so a text with only the algorithm in use costs the server less per
	 * decision. Its function is the library's one {@code decide}: a library's
	 * text runs once, at load.
	 * @param algorithm the algorithm
	 * @return the script
	 */
	static LimiterScript<List<Object>> decide(Algorithm algorithm) {
		return Objects.requireNonNull(DECIDE_ONE.get(algorithm), "every algorithm has a script");
	}

	/**
	 * Returns the script that decides one token bucket alone, taking the cost
	 * when it allows: the same decision as {@link #decide()} makes for it, with
	 * two arguments (four at most) rather than eight and no table per call, see
	 * {@code decide_token_bucket.lua}. Its {@code EVALSHA} text has the token
	 * bucket only.
	 * @return the script
	 */
	static LimiterScript<List<Object>> decideTokenBucket() {
		return DECIDE_TOKEN_BUCKET;
	}

	/**
	 * Returns the script that gives back what {@link #decide()} took, see
	 * {@code refund.lua}.
	 * @return the script
	 */
	static LimiterScript<List<Object>> refund() {
		return script("refund");
	}

	/**
	 * Returns the script that reserves, extends, settles, releases or reads a cost
	 * budget, see {@code budget.lua}. It needs only {@code lib.lua}.
	 * @return the script
	 */
	static LimiterScript<List<Object>> budget() {
		return script("budget");
	}

	/**
	 * Returns the lease semaphore of distributed concurrency caps: acquire,
	 * renew, release or count the permits of one key, see {@code semaphore.lua}.
	 * Like {@link #budget()} it needs only {@code lib.lua}.
	 * @return the script
	 */
	static LimiterScript<List<Object>> semaphore() {
		return script("semaphore");
	}

	/**
	 * Returns the script that applies several decision calls in one run, in
	 * order, each as its own call would, see {@code batch.lua}: its
	 * {@code EVALSHA} text defines every decision driver, as the library does.
	 * @return the script
	 */
	static LimiterScript<List<Object>> batch() {
		return BATCH;
	}

	/**
	 * Returns whether {@link #batch()} may call a driver.
	 * @param driver the driver's name, its function's name without the library's
	 * @return whether it is a decision driver
	 */
	static boolean batched(String driver) {
		return BATCHED.contains(driver);
	}

	/**
	 * Returns whether {@link #batch()} may carry a call of a script: a decision
	 * of any kind of limit.
	 * @param script the script
	 * @return whether it is a decision driver's
	 */
	static boolean batched(LimiterScript<?> script) {
		return BATCHED_DRIVERS.containsKey(script.function());
	}

	/**
	 * Returns the name of the driver a decision script's function runs, as
	 * {@link #batch()} takes it: the function's name without the library's.
	 * @param script a decision script ({@link #batched(LimiterScript)})
	 * @return the driver's name, US-ASCII
	 * @throws IllegalArgumentException when the script is not a decision driver's
	 */
	static byte[] batchedDriver(LimiterScript<?> script) {
		byte[] driver = BATCHED_DRIVERS.get(script.function());
		if (driver == null) {
			throw new IllegalArgumentException("A batch cannot carry the limiter call " + script.function());
		}
		return driver;
	}

	/**
	 * Returns the script that writes a provider pause, see {@code pause.lua}.
	 * @return the script
	 */
	static LimiterScript<Long> pause() {
		return script("pause");
	}

	/**
	 * Returns the script that reads what is left of a provider pause, see
	 * {@code pause_remaining.lua}.
	 * @return the script
	 */
	static LimiterScript<Long> pauseRemaining() {
		return script("pause_remaining");
	}

	/**
	 * Returns the script that sets a run-time override, see {@code override_put.lua}.
	 * @return the script
	 */
	static LimiterScript<Long> overridePut() {
		return script("override_put");
	}

	/**
	 * Returns the script that removes a run-time override, see
	 * {@code override_remove.lua}.
	 * @return the script
	 */
	static LimiterScript<Long> overrideRemove() {
		return script("override_remove");
	}

	/**
	 * Returns every script's {@code EVALSHA} text, for loading them into the
	 * server's script cache ahead of the first call.
	 * @return the scripts
	 */
	static List<RedisScript<?>> all() {
		List<RedisScript<?>> scripts = new ArrayList<>();
		for (LimiterScript<?> script : SCRIPTS.values()) {
			scripts.add(script.eval());
		}
		for (Algorithm algorithm : Algorithm.values()) {
			scripts.add(decide(algorithm).eval());
		}
		scripts.add(BATCH.eval());
		return scripts;
	}

	/**
	 * Returns the function library, the text {@code FUNCTION LOAD} takes: every
	 * script as a function, and {@link #pingFunction()}.
	 * @return the library's text
	 */
	static String library() {
		return LIBRARY;
	}

	/**
	 * Returns the name of the library, {@code ratelimit_} and a hash of its text.
	 * @return the name
	 */
	static String libraryName() {
		return LIBRARY_NAME;
	}

	/**
	 * Returns the name of the library's function that only replies 1, writing
	 * nothing: calling it proves that {@code FCALL} is allowed, not only
	 * {@code FUNCTION LOAD}.
	 * @return the function's name
	 */
	static String pingFunction() {
		return LIBRARY_NAME + "_ping";
	}

	@SuppressWarnings("unchecked")
	private static Map<String, byte[]> batchedDrivers() {
		Map<String, byte[]> drivers = new HashMap<>();
		for (String name : BATCHED) {
			drivers.put(LIBRARY_NAME + "_" + name, name.getBytes(StandardCharsets.US_ASCII));
		}
		return Map.copyOf(drivers);
	}

	private static <T> LimiterScript<T> script(String name) {
		return (LimiterScript<T>) Objects.requireNonNull(SCRIPTS.get(name), "a known script");
	}

	private static Map<String, LimiterScript<?>> scripts() {
		Map<String, LimiterScript<?>> scripts = new LinkedHashMap<>();
		for (Driver driver : DRIVERS) {
			String own = read(driver.name() + ".lua");
			String text = switch (driver.prelude()) {
				case NONE -> own;
				case LIB -> withLib(own);
				case TOKEN_BUCKET -> withLib(read("token_bucket.lua") + '\n' + own);
				case ALGORITHMS -> withLib(ALL_ALGORITHMS + own);
			};
			scripts.put(driver.name(), script(text, driver));
		}
		return scripts;
	}

	@SuppressWarnings({ "rawtypes", "unchecked" })
	private static <T> LimiterScript<T> script(String text, Driver driver) {
		// Text rather than a resource-backed script: a resource is checked for
		// modification (a file or jar look-up under a lock) on every execution.
		RedisScript<T> eval = (RedisScript) new DefaultRedisScript<>(text, driver.reply());
		return new LimiterScript<>(eval, LIBRARY_NAME + "_" + driver.name());
	}

	private static Map<Algorithm, LimiterScript<List<Object>>> decideOne() {
		Map<Algorithm, LimiterScript<List<Object>>> scripts = new EnumMap<>(Algorithm.class);
		for (Algorithm algorithm : Algorithm.values()) {
			String text = withLib(read(algorithm.name().toLowerCase(Locale.ROOT) + ".lua") + '\n' + read("decide.lua"));
			scripts.put(algorithm, script(text, driver("decide")));
		}
		return scripts;
	}

	/**
	 * The batch's {@code EVALSHA} text: {@code lib.lua} and the algorithms, each
	 * batched driver as a local function, then the batch, as in the library.
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	private static LimiterScript<List<Object>> composeBatch() {
		StringBuilder text = new StringBuilder(ALL_ALGORITHMS);
		for (String name : BATCHED) {
			text.append("\nlocal function ").append(name).append("(KEYS, ARGV)\n").append(read(name + ".lua"))
				.append("\nend\n");
		}
		text.append(batchDriver()).append("return batch(KEYS, ARGV)\n");
		RedisScript<List<Object>> eval = (RedisScript) new DefaultRedisScript<>(withLib(text.toString()), List.class);
		return new LimiterScript<>(eval, LIBRARY_NAME + "_batch");
	}

	/**
	 * {@code batch.lua} as a local function of {@code (KEYS, ARGV)}, after the
	 * table of the drivers it may call, which must be defined before it.
	 */
	private static String batchDriver() {
		StringBuilder text = new StringBuilder("\nlocal BATCHED = {");
		for (String name : BATCHED) {
			text.append(' ').append(name).append(" = ").append(name).append(',');
		}
		return text.append(" }\nlocal function batch(KEYS, ARGV)\n").append(read("batch.lua")).append("\nend\n")
			.toString();
	}

	/**
	 * The library without its first line: {@code lib.lua} (told to keep parsed
	 * numbers) and the algorithms once, then each driver as a local function of
	 * {@code (KEYS, ARGV)}, the names its text reads, registered under the
	 * library's name.
	 */
	private static String body() {
		// Numbers parsed in one call serve the next: see policyNumber in lib.lua.
		StringBuilder text = new StringBuilder(LIB).append("\nKEEP_PARSED = true\n").append(ALL_ALGORITHMS);
		for (Driver driver : DRIVERS) {
			text.append("\nlocal function ").append(driver.name()).append("(KEYS, ARGV)\n")
				.append(read(driver.name() + ".lua"))
				.append("\nend\nredis.register_function('")
				.append(NAME_MARK)
				.append('_')
				.append(driver.name())
				.append("', ")
				.append(driver.name())
				.append(")\n");
		}
		text.append(batchDriver()).append("redis.register_function('").append(NAME_MARK).append("_batch', batch)\n");
		text.append("redis.register_function{ function_name = '").append(NAME_MARK)
			.append("_ping', callback = function() return 1 end, flags = { 'no-writes' } }\n");
		return text.toString();
	}

	/**
	 * An {@code EVALSHA} text: the definitions of {@code lib.lua} that the rest
	 * of the text uses (and those they use, in the file's order), then the rest.
	 * Redis runs a script's whole text on every call, creating every function it
	 * defines, so a text that defines only what it calls costs the server less
	 * per decision (the token bucket's text had grown 5% dearer when every text
	 * defined every helper). The library for {@code FCALL} keeps them all: its
	 * text runs once, at load.
	 */
	private static String withLib(String rest) {
		List<String> needed = new ArrayList<>();
		// Names in comments are no uses: the code alone is searched.
		StringBuilder seen = new StringBuilder(withoutComments(rest));
		boolean grew = true;
		while (grew) {
			grew = false;
			for (LibDefinition definition : LIB_DEFINITIONS) {
				if (!needed.contains(definition.name()) && definition.usedIn(seen)) {
					needed.add(definition.name());
					seen.append('\n').append(withoutComments(definition.text()));
					grew = true;
				}
			}
		}
		StringBuilder text = new StringBuilder();
		for (LibDefinition definition : LIB_DEFINITIONS) {
			if (needed.contains(definition.name())) {
				text.append(definition.text());
			}
		}
		return text.append('\n').append(rest).toString();
	}

	/**
	 * {@code lib.lua}'s top-level definitions ({@code local function name} or
	 * {@code local name =}), each with the comment lines that follow it up to the
	 * next; the file's opening comment, before any, is left out.
	 */
	private static List<LibDefinition> libDefinitions() {
		List<LibDefinition> definitions = new ArrayList<>();
		Pattern start = Pattern.compile("^local (?:function )?([A-Za-z_][A-Za-z0-9_]*)");
		String name = null;
		StringBuilder text = new StringBuilder();
		for (String line : LIB.split("\n", -1)) {
			Matcher matcher = start.matcher(line);
			if (matcher.find()) {
				if (name != null) {
					definitions.add(new LibDefinition(name, text.toString()));
				}
				name = matcher.group(1);
				text.setLength(0);
			}
			if (name != null) {
				text.append(line).append('\n');
			}
		}
		if (name != null) {
			definitions.add(new LibDefinition(name, text.toString()));
		}
		return List.copyOf(definitions);
	}

	/** A text with its Lua line comments taken out (the scripts put no {@code --} inside strings). */
	private static String withoutComments(String text) {
		return text.replaceAll("--[^\n]*", "");
	}

	/** One top-level definition of {@code lib.lua}: the name it defines and its text. */
	private record LibDefinition(String name, String text) {

		boolean usedIn(CharSequence text) {
			return Pattern.compile("\\b" + this.name + "\\b").matcher(text).find();
		}

	}

	private static String algorithms() {
		StringBuilder text = new StringBuilder();
		for (String algorithm : ALGORITHMS) {
			text.append(read(algorithm)).append('\n');
		}
		return text.toString();
	}

	private static Driver driver(String name) {
		for (Driver driver : DRIVERS) {
			if (driver.name().equals(name)) {
				return driver;
			}
		}
		throw new IllegalArgumentException("No rate limit script " + name);
	}

	private static String read(String name) {
		ClassPathResource resource = new ClassPathResource(LOCATION + name, LuaScripts.class.getClassLoader());
		try (InputStream in = resource.getInputStream()) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the Lua script " + resource, ex);
		}
	}

	/** What a driver's text needs before it. */
	private enum Prelude {

		/** Nothing: the driver stands alone. */
		NONE,

		/** {@code lib.lua}. */
		LIB,

		/** {@code lib.lua} and the token bucket. */
		TOKEN_BUCKET,

		/** {@code lib.lua} and every algorithm. */
		ALGORITHMS

	}

	/** A driver: its file's name without {@code .lua}, its prelude, the Java type of its reply. */
	private record Driver(String name, Prelude prelude, Class<?> reply) {
	}

}

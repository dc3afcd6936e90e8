package dev.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code lib.lua}'s floorDiv and ceilDiv on a real Redis against Java's
 * {@link Math#floorDiv} (and its ceiling, {@code -floorDiv(-a, b)}), where doubles could go
 * wrong: dividends up to 2^51 either sign, divisors from 1 to 2^51, and
 * dividends one off a multiple of the divisor, whose quotient a rounding
 * would push to the next integer.
 */
class LuaArithmeticTests extends SharedRedisTests {

	private static final long LIMIT = 1L << 51;

	@Test
	void floorAndCeilingDivisionAreExactUpToTheLimits() throws IOException {
		RedisScript<List<Object>> script = divisions();
		Random random = new Random(20261202L);
		List<Long> dividends = new ArrayList<>();
		List<Long> divisors = new ArrayList<>();
		for (int i = 0; i < 4_000; i++) {
			long b = (i % 3 == 0) ? 1 + random.nextInt(1_000) : 1 + Math.floorMod(random.nextLong(), LIMIT - 1);
			long a = Math.floorMod(random.nextLong(), 2 * LIMIT) - LIMIT;
			if (i % 2 == 0) {
				// One off (or on) a multiple of b: the hardest quotients to round.
				long multiple = Math.floorDiv(a, b) * b;
				a = Math.max(-LIMIT + 1, Math.min(LIMIT - 1, multiple + (i % 4) - 1));
			}
			dividends.add(a);
			divisors.add(b);
		}
		dividends.addAll(List.of(LIMIT - 1, -(LIMIT - 1), LIMIT - 1, 0L, 1L, -1L));
		divisors.addAll(List.of(LIMIT - 2, LIMIT - 2, 3L, 7L, LIMIT - 1, LIMIT - 1));

		StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
		for (int from = 0; from < dividends.size(); from += 500) {
			int to = Math.min(dividends.size(), from + 500);
			List<String> args = new ArrayList<>();
			for (int i = from; i < to; i++) {
				args.add(Long.toString(dividends.get(i)));
				args.add(Long.toString(divisors.get(i)));
			}
			List<Object> reply = redis.execute(script, List.of(), args.toArray());
			for (int i = from; i < to; i++) {
				long a = dividends.get(i);
				long b = divisors.get(i);
				int at = 2 * (i - from);
				assertThat(reply.get(at)).as("floorDiv(%d, %d)", a, b).isEqualTo(Long.toString(Math.floorDiv(a, b)));
				assertThat(reply.get(at + 1)).as("ceilDiv(%d, %d)", a, b).isEqualTo(Long.toString(-Math.floorDiv(-a, b)));
			}
		}
	}

	@SuppressWarnings({ "rawtypes", "unchecked" })
	private static RedisScript<List<Object>> divisions() throws IOException {
		try (InputStream in = LuaArithmeticTests.class.getClassLoader()
			.getResourceAsStream("META-INF/scripts/lib.lua")) {
			String lib = new String(in.readAllBytes(), StandardCharsets.UTF_8);
			String driver = "local out = {}\nfor i = 1, #ARGV, 2 do\n"
					+ "local a, b = tonumber(ARGV[i]), tonumber(ARGV[i + 1])\n"
					+ "out[#out + 1] = int(floorDiv(a, b))\nout[#out + 1] = int(ceilDiv(a, b))\nend\nreturn out";
			return (RedisScript) new DefaultRedisScript<>(lib + '\n' + driver, List.class);
		}
	}

}

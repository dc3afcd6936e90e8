package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisCommandExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * Several decision calls as one call of {@code batch.lua}, and its reply as
 * each call's own: the keys and arguments the batch takes (each call's
 * driver, its number of keys and of arguments, then its arguments), and, per
 * call, the reply its own call would have returned or the failure it would
 * have thrown, as {@link LettuceFunctions} translates a script's error.
 * <p>
 * Only the drivers {@code batch.lua} may call take part: every decision of
 * every kind of limit (decide, the one-bucket decide, give-backs, budgets,
 * permits).
 *
 * @param keys the batch's keys, call after call
 * @param args the batch's arguments
 * @param count how many calls it carries
 */
record DecisionBatch(List<String> keys, byte[][] args, int count) {

	/**
	 * One decision call.
	 * @param script its script: a decision driver
	 * @param keys its keys
	 * @param args its arguments
	 */
	record Call(LimiterScript<?> script, List<String> keys, byte[][] args) {
	}

	/**
	 * Builds the batch of some calls, in their order.
	 * @param calls the calls, at least one
	 * @return the batch
	 * @throws IllegalArgumentException when a call's script is not a decision driver
	 */
	static DecisionBatch of(List<Call> calls) {
		List<String> keys = new ArrayList<>();
		int argCount = 0;
		for (Call call : calls) {
			argCount += 3 + call.args().length;
		}
		byte[][] args = new byte[argCount][];
		int at = 0;
		for (Call call : calls) {
			keys.addAll(call.keys());
			args[at++] = LuaScripts.batchedDriver(call.script());
			args[at++] = PolicyArguments.digits(call.keys().size());
			args[at++] = PolicyArguments.digits(call.args().length);
			System.arraycopy(call.args(), 0, args, at, call.args().length);
			at += call.args().length;
		}
		return new DecisionBatch(List.copyOf(keys), args, calls.size());
	}

	/**
	 * Returns each call's outcome from the batch's reply: its reply, or the
	 * failure its own call would have thrown.
	 * @param reply the batch's reply, one entry per call
	 * @return per call, its reply or a {@link RuntimeException}
	 * @throws IllegalStateException when the reply does not hold one entry per call
	 */
	List<@Nullable Object> outcomes(@Nullable Object reply) {
		if (!(reply instanceof List<?> entries) || entries.size() != this.count) {
			throw new IllegalStateException("A batch of " + this.count + " limiter call(s) was answered with "
					+ ((reply instanceof List<?> list) ? list.size() + " reply(ies)" : String.valueOf(reply)));
		}
		List<@Nullable Object> outcomes = new ArrayList<>(this.count);
		for (Object entry : entries) {
			if (!(entry instanceof List<?> pair) || pair.size() != 2) {
				throw new IllegalStateException("A batch's reply holds a malformed entry: " + entry);
			}
			// The same failure a call of its own would throw: Redis' error, as LettuceFunctions translates it.
			outcomes.add(Long.valueOf(1).equals(pair.get(0)) ? pair.get(1)
					: LettuceFunctions.translate(new RedisCommandExecutionException(String.valueOf(pair.get(1)))));
		}
		return outcomes;
	}

}

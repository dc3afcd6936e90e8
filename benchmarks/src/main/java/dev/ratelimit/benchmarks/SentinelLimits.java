package dev.ratelimit.benchmarks;

import java.nio.file.Path;
import java.util.List;

import com.alibaba.csp.sentinel.Entry;
import com.alibaba.csp.sentinel.EntryType;
import com.alibaba.csp.sentinel.SphU;
import com.alibaba.csp.sentinel.slots.block.BlockException;
import com.alibaba.csp.sentinel.slots.block.RuleConstant;
import com.alibaba.csp.sentinel.slots.block.flow.FlowRule;
import com.alibaba.csp.sentinel.slots.block.flow.FlowRuleManager;
import com.alibaba.csp.sentinel.slots.block.flow.param.ParamFlowRule;
import com.alibaba.csp.sentinel.slots.block.flow.param.ParamFlowRuleManager;

/**
 * Alibaba Sentinel as {@link InMemoryDecisionBenchmark} uses it: a QPS
 * {@link FlowRule} on one resource, and a hot-parameter {@link ParamFlowRule}
 * (QPS) on one resource whose parameter is the key, which is how Sentinel limits
 * per key. Sentinel keeps a slot chain, and so checks rules, for at most 6,000
 * resources ({@code Constants.MAX_SLOT_CHAIN_SIZE}) and lets the others pass
 * unchecked, so 10,000 keys are 10,000 values of one parameter, not 10,000
 * resources.
 * <p>
 * Each rule is first loaded with a count of 1 and shown to block a second call
 * (for the hot-parameter rule, on every key), so that the benchmark fails rather
 * than time calls that decide nothing; then it is loaded so high that it never
 * blocks.
 */
final class SentinelLimits {

	/** The resource of the hot-parameter rule. */
	static final String KEYED = "bench-keyed";

	/**
	 * The window of the hot-parameter rule. Sentinel keeps the state of at most
	 * 4,000 values per second of it ({@code ParameterMetric}'s
	 * {@code BASE_PARAM_MAX_CAPACITY × durationInSec}) and forgets the least
	 * recently used beyond that: 3 s keeps 12,000, every one of the 10,000 keys.
	 */
	private static final int WINDOW_SECONDS = 3;

	private SentinelLimits() {
	}

	/**
	 * Sends Sentinel's own logs and metric files to a temporary directory, not
	 * {@code ~/logs/csp}; call before any other Sentinel class is used.
	 */
	static void logToTemporaryDirectory() {
		System.setProperty("csp.sentinel.log.dir",
				Path.of(System.getProperty("java.io.tmpdir"), "rate-limit-benchmarks-sentinel").toString());
	}

	/**
	 * Loads a QPS flow rule on one resource, after checking that it decides.
	 * @param resource the resource
	 * @param perSecond the calls admitted per second
	 */
	static void flowRule(String resource, double perSecond) {
		FlowRuleManager.loadRules(List.of(flowRuleOf(resource, 1)));
		boolean first = passes(resource);
		boolean second = passes(resource);
		if (!first || second) {
			throw new IllegalStateException("Sentinel's flow rule on " + resource + " does not decide: "
					+ "a rule of 1 per second let a second call pass");
		}
		FlowRuleManager.loadRules(List.of(flowRuleOf(resource, perSecond)));
	}

	/**
	 * Loads a QPS hot-parameter rule on {@link #KEYED}, its first parameter the
	 * key, after checking that it decides for every key on its own.
	 * @param keys the parameter values the benchmark uses
	 * @param perSecond the calls admitted per second and key
	 */
	static void hotParameterRule(String[] keys, long perSecond) {
		ParamFlowRuleManager.loadRules(List.of(paramRuleOf(1)));
		for (String key : keys) {
			if (!passes(KEYED, key)) {
				throw new IllegalStateException("Sentinel's hot-parameter rule blocked the first call of " + key);
			}
		}
		// Each key took its one call: a second blocks if, and only if, the key still has its own state.
		for (String key : keys) {
			if (passes(KEYED, key)) {
				throw new IllegalStateException("Sentinel's hot-parameter rule does not decide for " + key
						+ ": a rule of 1 per window let a second call pass");
			}
		}
		ParamFlowRuleManager.loadRules(List.of(paramRuleOf(perSecond * WINDOW_SECONDS)));
	}

	/**
	 * One decision on a resource: entered, then exited.
	 * @param resource the resource
	 * @return whether the call passed
	 */
	static boolean passes(String resource) {
		try {
			Entry entry = SphU.entry(resource);
			entry.exit();
			return true;
		}
		catch (BlockException ex) {
			return false;
		}
	}

	/**
	 * One decision on a resource for a key: entered and exited with the key as the
	 * parameter, as a hot-parameter rule needs.
	 * @param resource the resource
	 * @param key the key
	 * @return whether the call passed
	 */
	static boolean passes(String resource, String key) {
		try {
			Entry entry = SphU.entry(resource, EntryType.OUT, 1, key);
			entry.exit(1, key);
			return true;
		}
		catch (BlockException ex) {
			return false;
		}
	}

	private static FlowRule flowRuleOf(String resource, double perSecond) {
		FlowRule rule = new FlowRule(resource);
		rule.setGrade(RuleConstant.FLOW_GRADE_QPS);
		rule.setCount(perSecond);
		return rule;
	}

	private static ParamFlowRule paramRuleOf(long perWindow) {
		ParamFlowRule rule = new ParamFlowRule(KEYED);
		rule.setGrade(RuleConstant.FLOW_GRADE_QPS);
		rule.setParamIdx(0);
		rule.setCount(perWindow);
		rule.setDurationInSec(WINDOW_SECONDS);
		return rule;
	}

}

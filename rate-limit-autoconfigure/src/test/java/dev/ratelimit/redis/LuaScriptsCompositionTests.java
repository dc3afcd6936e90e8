package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.Algorithm;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each {@code EVALSHA} text defines only the shared helpers it uses: Redis runs
 * the whole text on every call, so a helper defined and never called costs
 * every decision (the token bucket's text was 5% dearer for them). The
 * function library keeps every helper: its text runs once. That the texts
 * still decide is what the script tests on the shared redis-server show (they
 * run {@code EVALSHA}).
 */
class LuaScriptsCompositionTests {

	private static final Pattern LOCAL_FUNCTION = Pattern.compile("(?m)^local function ([A-Za-z_][A-Za-z0-9_]*)");

	@Test
	void everyFunctionAnEvalShaTextDefinesIsCalledInIt() {
		List<RedisScript<?>> scripts = new ArrayList<>(LuaScripts.all());
		for (RedisScript<?> script : scripts) {
			String text = script.getScriptAsString();
			String code = text.replaceAll("--[^\n]*", "");
			Matcher defined = LOCAL_FUNCTION.matcher(code);
			while (defined.find()) {
				String name = defined.group(1);
				long uses = Pattern.compile("\\b" + name + "\\b").matcher(code).results().count();
				assertThat(uses).as("uses of %s (its definition included) in a text of %d chars", name, text.length())
					.isGreaterThan(1);
			}
		}
	}

	@Test
	void theTokenBucketsTextLeavesOutTheWindowsHelpers() {
		String text = LuaScripts.decideTokenBucket().eval().getScriptAsString();
		assertThat(text).contains("local function ceilDiv", "local function loadPair", "local function storePair")
			.doesNotContain("local function loadString", "local function storeString", "local function floorMod",
					"local function readPolicy");
		assertThat(LuaScripts.decide(Algorithm.FIXED_WINDOW).eval().getScriptAsString())
			.contains("local function loadString", "local function storeString", "local function readPolicy");
	}

	@Test
	void theLibraryKeepsEveryHelper() {
		assertThat(LuaScripts.library()).contains("local function loadString", "local function floorMod",
				"local function lessLostSince", "local function bucketPolicy", "local function readPolicy");
	}

}

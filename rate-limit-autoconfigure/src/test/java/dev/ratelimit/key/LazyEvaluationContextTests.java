package dev.ratelimit.key;

import java.lang.reflect.Method;
import java.util.Locale;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A call's evaluation context is built only when an expression needs it: the
 * built-in keys are read from the key context, anything else builds the SpEL
 * context, with the same variables it always had.
 */
class LazyEvaluationContextTests {

	private final KeyExpressions expressions = new KeyExpressions(null);

	private final FixedRequest request = new FixedRequest("203.0.113.7", "alice", Map.of("X-Api-Key", "k-1"));

	@Test
	void builtInKeysDoNotBuildTheContext() {
		EvaluationContext context = this.expressions.context(this.request, null, null);
		assertThat(this.expressions.key(this.expressions.parse("ip"), context)).isEqualTo("203.0.113.7");
		assertThat(this.expressions.key(this.expressions.parse("principal"), context)).isEqualTo("alice");
		assertThat(this.expressions.key(this.expressions.parse("global"), context)).isEqualTo("global");
		assertThat(((LazyEvaluationContext) context).isBuilt()).isFalse();
	}

	@Test
	void everyBuiltInKeyIsParsedLazilyAndReadWithoutTheContextAndNothingElseIs() {
		for (BuiltInKeyExpression.Key key : BuiltInKeyExpression.Key.values()) {
			String text = key.name().toLowerCase(Locale.ROOT);
			Expression expression = this.expressions.parse(text);
			assertThat(expression).isInstanceOf(BuiltInKeyExpression.class);
			EvaluationContext context = this.expressions.context(this.request, null, null);
			assertThat(this.expressions.key(expression, context)).isEqualTo(key.read(new KeyContext(this.request)));
			assertThat(((LazyEvaluationContext) context).isBuilt()).isFalse();
		}
		// Near misses are SpEL, parsed at once.
		for (String text : new String[] { "IP", "ip ", "globals", "principal.name" }) {
			assertThat(this.expressions.parse(text)).isInstanceOf(SpelExpression.class);
		}
		// A caller without a principal has no principal key: the policy's missing-key rule decides.
		FixedRequest anonymous = new FixedRequest("203.0.113.7", null, Map.of());
		EvaluationContext context = this.expressions.context(anonymous, null, null);
		assertThat(this.expressions.key(this.expressions.parse("principal"), context)).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "ip", "principal", "global" })
	void builtInKeysAreNotParsedYetEvaluateAsSpelDoesAnywhere(String builtIn) {
		Expression expression = this.expressions.parse(builtIn);
		// Not parsed: an application whose keys are all built in loads no SpEL syntax tree.
		assertThat(expression).isNotInstanceOf(SpelExpression.class);
		assertThat(expression.getExpressionString()).isEqualTo(builtIn);
		Expression spel = new SpelExpressionParser().parseExpression(builtIn);
		EvaluationContext lazy = this.expressions.context(this.request, null, null);
		assertThat(expression.getValue(lazy)).isEqualTo(spel.getValue(lazy));
		KeyContext root = new KeyContext(this.request);
		assertThat(expression.getValue(root)).isEqualTo(spel.getValue(root));
		assertThat(expression.getValueType(lazy)).isEqualTo(spel.getValueType(lazy));
		assertThat(expression.isWritable(lazy)).isEqualTo(spel.isWritable(lazy));
		// Outside a key context SpEL's own answer, a failure here.
		assertThatExceptionOfType(EvaluationException.class).isThrownBy(() -> expression.getValue("text"));
		assertThatExceptionOfType(EvaluationException.class).isThrownBy(() -> spel.getValue("text"));
	}

	@Test
	void anExpressionBuildsTheContextOnceWithTheRequestVariable() {
		EvaluationContext context = this.expressions.context(this.request, null, null);
		assertThat(this.expressions.key(this.expressions.parse("header('X-Api-Key')"), context)).isEqualTo("k-1");
		assertThat(((LazyEvaluationContext) context).isBuilt()).isTrue();
		assertThat(this.expressions.condition(this.expressions.parse("#request == 'native'"), context)).isTrue();
		assertThat(context.getRootObject().getValue()).isInstanceOf(KeyContext.class);
	}

	@Test
	void methodArgumentsAreVariablesOfTheBuiltContext() throws Exception {
		Method method = Target.class.getDeclaredMethod("call", String.class);
		EvaluationContext context = this.expressions.context(this.request, method, new Object[] { "acme" });
		assertThat(this.expressions.key(this.expressions.parse("#tenant + ':' + ip"), context))
			.isEqualTo("acme:203.0.113.7");
		// The method has no parameter named request: the native request is #request.
		assertThat(this.expressions.condition(this.expressions.parse("#request == 'native'"), context)).isTrue();
	}

	static class Target {

		void call(String tenant) {
		}

	}

	/** A request with fixed answers; its native request is the string {@code native}. */
	record FixedRequest(String clientIp, String principalName, Map<String, String> headers) implements KeyRequest {

		@Override
		public String header(String name) {
			return this.headers.get(name);
		}

		@Override
		public byte[] clientAddress() {
			return new byte[] { (byte) 203, 0, 113, 7 };
		}

		@Override
		public boolean isUserInRole(String role) {
			return false;
		}

		@Override
		public Object nativeRequest() {
			return "native";
		}

	}

}

package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import org.springframework.http.server.RequestPath;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

import dev.ratelimit.web.servlet.ServletExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The route matcher's string comparison gives the path pattern's own answer:
 * every pattern against every path built from segments that decode, carry path
 * parameters, repeat separators or differ in case, with and without a context
 * path, compared with {@link PathPattern#matches} on the parsed path.
 */
class RouteMatcherTests {

	private static final List<String> PATTERNS = List.of("/api/**", "/api", "/api/hello", "/**", "/a/b/**",
			"/a.b/**", "/v1.0/x~y/**", "/api/*", "/api/{id}", "/API/**", "/api/hello/**");

	private static final List<String> SEGMENTS = List.of("api", "API", "hello", "a", "b", "a.b", "..", ".", "",
			"x", "x~y", "v1.0", "%61pi", "api;v=1", "hello%2Fx", "b;", "ap", "apix");

	@Test
	void givesThePatternsAnswerForEveryPath() {
		List<String> paths = paths();
		int compared = 0;
		int withoutParsing = 0;
		for (String text : PATTERNS) {
			PathPattern pattern = PathPatternParser.defaultInstance.parse(text);
			RouteMatcher matcher = new RouteMatcher(new RouteRule(pattern, Set.of(), List.of()));
			for (String context : List.of("", "/ctx")) {
				for (String path : paths) {
					MockHttpServletRequest request = new MockHttpServletRequest("GET", context + path);
					request.setContextPath(context);
					boolean expected = pattern
						.matches(RequestPath.parse(context + path, context).pathWithinApplication());
					ServletExchange parsed = exchange(request);
					assertThat(matcher.matches(parsed))
						.as("%s against %s (context path '%s')", text, path, context)
						.isEqualTo(expected);
					compared++;
					withoutParsing += parsed.isParsed() ? 0 : 1;
				}
			}
		}
		// Both ways were taken, many times: literal patterns on plain paths compare strings.
		assertThat(compared).isGreaterThan(100_000);
		assertThat(withoutParsing).isGreaterThan(compared / 3);
	}

	@Test
	void literalPatternsOnPlainPathsAreNotParsed() {
		RouteMatcher matcher = new RouteMatcher(
				new RouteRule(PathPatternParser.defaultInstance.parse("/api/**"), Set.of(), List.of()));
		ServletExchange path = exchange(new MockHttpServletRequest("GET", "/api/hello"));
		assertThat(matcher.matches(path)).isTrue();
		assertThat(path.isParsed()).isFalse();
		ServletExchange encoded = exchange(new MockHttpServletRequest("GET", "/%61pi/hello"));
		assertThat(matcher.matches(encoded)).isTrue();
		assertThat(encoded.isParsed()).isTrue();
	}

	@Test
	void anotherMethodDoesNotMatch() {
		RouteMatcher matcher = new RouteMatcher(
				new RouteRule(PathPatternParser.defaultInstance.parse("/api/**"), Set.of("POST"), List.of()));
		assertThat(matcher.matches(exchange(new MockHttpServletRequest("GET", "/api/hello")))).isFalse();
		assertThat(matcher.matches(exchange(new MockHttpServletRequest("POST", "/api/hello")))).isTrue();
	}

	private static ServletExchange exchange(MockHttpServletRequest request) {
		return new ServletExchange(request, null, new ClientIpResolver(List.of()), null);
	}

	/** Every path of one to three segments, each also with a trailing slash, and the empty path. */
	private static List<String> paths() {
		List<String> paths = new ArrayList<>();
		paths.add("");
		paths.add("/");
		List<String> current = List.of("");
		for (int depth = 0; depth < 3; depth++) {
			List<String> next = new ArrayList<>();
			for (String prefix : current) {
				for (String segment : SEGMENTS) {
					next.add(prefix + "/" + segment);
				}
			}
			for (String path : next) {
				paths.add(path);
				paths.add(path + "/");
			}
			current = next;
		}
		return paths;
	}

}

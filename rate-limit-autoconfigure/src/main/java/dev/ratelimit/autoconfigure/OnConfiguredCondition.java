package dev.ratelimit.autoconfigure;

import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.ConfigurationPropertyState;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * {@link ConditionalOnConfigured}: whether any property source holds a
 * property below the group, in any of the forms Spring Boot binds (relaxed
 * names, environment variables, indexes). A source that cannot tell, which
 * Spring Boot's own sources never are, counts as holding one: a feature
 * created for nothing costs its beans, one missing would be ignored
 * configuration.
 */
class OnConfiguredCondition extends SpringBootCondition {

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Map<String, @Nullable Object> attributes = Objects.requireNonNull(
				metadata.getAnnotationAttributes(ConditionalOnConfigured.class.getName()),
				"the condition of @ConditionalOnConfigured");
		String group = (String) Objects.requireNonNull(attributes.get("value"), "the group of @ConditionalOnConfigured");
		return configured(context.getEnvironment(), group) ? ConditionOutcome.match("found properties below " + group)
				: ConditionOutcome.noMatch("no property below " + group);
	}

	/**
	 * Returns whether an environment holds any property below a group.
	 * @param environment the environment
	 * @param group the group, such as {@code rate-limit.budgets}
	 * @return whether one is there, or a source cannot tell
	 */
	static boolean configured(Environment environment, String group) {
		ConfigurationPropertyName name = ConfigurationPropertyName.of(group);
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (source.containsDescendantOf(name) != ConfigurationPropertyState.ABSENT) {
				return true;
			}
		}
		return false;
	}

}

package dev.ratelimit.autoconfigure;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.autoproxy.AbstractAdvisorAutoProxyCreator;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Makes sure an auto-proxy creator applies the limit advisor: Spring's
 * infrastructure one when the application has none that applies advisors,
 * nothing when it has one (Spring Boot's, registered before this, AspectJ's
 * when AspectJ is on the class path, or one of its own). The starter does not
 * bring AspectJ; without it Spring Boot registers a creator only while
 * {@code spring.aop.proxy-target-class} is true (the default) and
 * {@code spring.aop.auto} is not false, and the limit annotations would
 * otherwise be ignored without a word.
 */
class AutoProxyCreatorRegistrar implements ImportBeanDefinitionRegistrar {

	@Override
	public void registerBeanDefinitions(AnnotationMetadata importingClassMetadata, BeanDefinitionRegistry registry) {
		if (registry instanceof ListableBeanFactory beans
				&& beans.getBeanNamesForType(AbstractAdvisorAutoProxyCreator.class, true, false).length > 0) {
			return;
		}
		AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
	}

}

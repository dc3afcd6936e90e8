package dev.ratelimit.benchmarks.bucket4j;

import javax.cache.CacheManager;
import javax.cache.Caching;
import javax.cache.configuration.MutableConfiguration;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The cache Bucket4j's Spring Boot starter keeps its buckets in, as the
 * sample app's own configuration: Caffeine behind JCache, in memory, with the
 * cache the filter names. Runs only inside the copy of the sample app that
 * {@code Bucket4jStarter} writes, which names this class in
 * {@code spring.main.sources}; nothing in the benchmarks loads it.
 * <p>
 * Why a bean of the application rather than Spring Boot's cache support (the
 * starter's docs and caffeine example: {@code spring-boot-starter-cache},
 * {@code @EnableCaching}, {@code spring.cache.cache-names}): starter 0.12.10
 * orders its cache configuration after Spring Boot 3's
 * {@code org.springframework.boot.autoconfigure.cache.CacheAutoConfiguration},
 * a class Spring Boot 4 moved to another package, so on Boot 4 its condition
 * on a JCache {@code CacheManager} is evaluated before Boot's cache
 * configuration declares one, and the app fails at start with "No Bucket4j
 * cache configuration found". An application's own beans are declared before
 * any auto-configuration, which is also what the starter's failure message
 * suggests (provide your own cache).
 */
@Configuration(proxyBeanMethods = false)
public class Bucket4jCache {

	/** The cache named by {@code bucket4j.filters[0].cache-name}, the starter's default. */
	public static final String CACHE = "buckets";

	/** Caffeine's JCache provider, named in case another one is on the class path. */
	private static final String PROVIDER = "com.github.benmanes.caffeine.jcache.spi.CaffeineCachingProvider";

	@Bean
	CacheManager bucket4jCacheManager() {
		CacheManager manager = Caching.getCachingProvider(PROVIDER).getCacheManager();
		// Created here: the starter looks the cache up while the web server is set up, before other beans exist.
		manager.createCache(CACHE, new MutableConfiguration<String, byte[]>());
		return manager;
	}

}

package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.netflix.concurrency.limits.limit.Gradient2Limit;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.concurrency.AdaptiveConcurrencyLimiter;
import dev.ratelimit.concurrency.Priority;

/**
 * The server of {@link AdaptiveCapExperiment}: a Spring Boot servlet app whose
 * one endpoint, {@code GET /work}, calls a downstream of fixed capacity, a pool
 * of {@value #WORKERS} workers behind an unbounded queue, each call taking
 * {@value #SERVICE_MILLIS} ms (a sleep, so the CPU is not what runs out), so
 * that its latency is its wait in the queue plus its service time. Every
 * 250 ms a line goes to the file named by {@code experiment.stats-file}: the
 * time, the cap's limit and calls in flight, the downstream's queue and busy
 * workers, the calls in {@code /work} and the calls served so far.
 * <p>
 * {@code experiment.mode}: {@code none} (no cap; run with
 * {@code rate-limit.enabled=false}), {@code adaptive} (the starter's adaptive
 * cap, configured by {@code rate-limit.*} arguments), {@code netflix}
 * ({@link NetflixServletLimit} in front of everything; run with
 * {@code rate-limit.enabled=false}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(AdaptiveCapServer.Work.class)
public class AdaptiveCapServer {

	/** The downstream's workers. */
	static final int WORKERS = 8;

	/**
	 * The downstream's service time of one call: 40 ms, capacity 200 calls/s, so
	 * that 5× with retries (up to 3,000 attempts/s) stays within what Tomcat
	 * answers on the one CPU the server has; at 10 ms (800/s) the server's CPU,
	 * not the downstream, ran out first.
	 */
	static final int SERVICE_MILLIS = 40;

	public static void main(String[] args) {
		SpringApplication.run(AdaptiveCapServer.class, args);
	}

	@Bean(destroyMethod = "shutdownNow")
	ThreadPoolExecutor downstream() {
		return new ThreadPoolExecutor(WORKERS, WORKERS, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>());
	}

	@Bean
	@ConditionalOnProperty(name = "experiment.mode", havingValue = "netflix")
	NetflixServletLimit netflixServletLimit(@Value("${experiment.netflix.initial-limit:20}") int initialLimit,
			@Value("${experiment.netflix.max-limit:200}") int maxLimit,
			@Value("${experiment.netflix.critical-share:0.5}") double criticalShare) {
		return new NetflixServletLimit(Gradient2Limit.newBuilder()
			.initialLimit(initialLimit)
			.minLimit(1)
			.maxConcurrency(maxLimit)
			.build(), "X-Priority", criticalShare);
	}

	@Bean
	@ConditionalOnProperty(name = "experiment.mode", havingValue = "netflix")
	FilterRegistrationBean<NetflixServletLimit> netflixServletLimitRegistration(NetflixServletLimit filter) {
		FilterRegistrationBean<NetflixServletLimit> registration = new FilterRegistrationBean<>(filter);
		registration.addUrlPatterns("/work");
		return registration;
	}

	@Bean(destroyMethod = "shutdownNow")
	ScheduledExecutorService statsWriter(@Value("${experiment.stats-file}") String file, ThreadPoolExecutor downstream,
			Work work, ObjectProvider<AdaptiveConcurrencyLimiter> adaptive, ObjectProvider<NetflixServletLimit> netflix)
			throws IOException {
		PrintWriter out = new PrintWriter(Files.newBufferedWriter(Path.of(file)), true);
		AdaptiveConcurrencyLimiter caps = adaptive.getIfAvailable();
		NetflixServletLimit filter = netflix.getIfAvailable();
		ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "experiment-stats");
			thread.setDaemon(true);
			return thread;
		});
		timer.scheduleAtFixedRate(() -> {
			int limit = -1;
			int inFlight = -1;
			if (caps != null && caps.limit("overload").isPresent()) {
				limit = caps.limit("overload").getAsInt();
				inFlight = 0;
				for (Priority priority : Priority.values()) {
					inFlight += caps.inFlight("overload", priority);
				}
			}
			else if (filter != null) {
				limit = filter.limit();
				inFlight = filter.inFlight();
			}
			out.println(System.currentTimeMillis() + " " + limit + " " + inFlight + " " + downstream.getQueue().size()
					+ " " + downstream.getActiveCount() + " " + work.inWork.get() + " " + work.served.get());
		}, 0, 250, TimeUnit.MILLISECONDS);
		return timer;
	}

	/** The endpoint: waits for the downstream's answer. */
	@RestController
	static class Work {

		final AtomicInteger inWork = new AtomicInteger();

		final AtomicLong served = new AtomicLong();

		private final ThreadPoolExecutor downstream;

		Work(ThreadPoolExecutor downstream) {
			this.downstream = downstream;
		}

		@GetMapping("/work")
		String work() throws InterruptedException, ExecutionException {
			this.inWork.incrementAndGet();
			try {
				this.downstream.submit(() -> {
					Thread.sleep(SERVICE_MILLIS);
					return null;
				}).get();
				this.served.incrementAndGet();
				return "ok";
			}
			finally {
				this.inWork.decrementAndGet();
			}
		}

		@GetMapping("/ready")
		String ready() {
			return "ready";
		}

	}

}

package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.util.Optional;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limiter.AbstractLimiter;
import com.netflix.concurrency.limits.limiter.AbstractPartitionedLimiter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Netflix's servlet limit for {@link AdaptiveCapExperiment}: the limiter that
 * {@code concurrency-limits-servlet-jakarta}'s {@code ServletLimiterBuilder}
 * builds (Netflix's own {@link AbstractPartitionedLimiter}, partitioned by a
 * header) behind a filter that does what that module's
 * {@code ConcurrencyLimitServletFilter} does: acquire, run the chain, tell the
 * limiter success (or ignore if the chain threw), and answer a rejected call
 * 429 with a short text body.
 * <p>
 * Written here because {@code com.netflix.concurrency-limits:concurrency-limits-servlet-jakarta:0.5.4}
 * is not published (the build cannot resolve it), and the javax module
 * {@code concurrency-limits-servlet} cannot run on Tomcat 11's
 * {@code jakarta.servlet}. Only {@code concurrency-limits-core} 0.5.4 runs here,
 * the same jar the starter uses.
 */
final class NetflixServletLimit implements Filter {

	private final AbstractLimiter<HttpServletRequest> limiter;

	/**
	 * @param limit the limit algorithm
	 * @param header the header naming the partition
	 * @param criticalShare the {@code critical} partition's share of the limit; {@code normal} has the rest
	 */
	@SuppressWarnings("unchecked")
	NetflixServletLimit(Limit limit, String header, double criticalShare) {
		Limiter<HttpServletRequest> built = new Builder().partitionResolver((request) -> request.getHeader(header))
			.partition("critical", criticalShare)
			.partition("normal", 1 - criticalShare)
			.limit(limit)
			.named("netflix")
			.build();
		this.limiter = (AbstractLimiter<HttpServletRequest>) built;
	}

	int limit() {
		return this.limiter.getLimit();
	}

	int inFlight() {
		return this.limiter.getInflight();
	}

	@Override
	public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
			throws IOException, ServletException {
		Optional<Limiter.Listener> listener = this.limiter.acquire((HttpServletRequest) request);
		if (listener.isEmpty()) {
			HttpServletResponse http = (HttpServletResponse) response;
			http.setStatus(429);
			http.getWriter().print("Concurrency limit exceeded");
			return;
		}
		try {
			chain.doFilter(request, response);
			listener.get().onSuccess();
		}
		catch (IOException | ServletException | RuntimeException ex) {
			listener.get().onIgnore();
			throw ex;
		}
	}

	/** The partitioned limiter's builder, as the servlet module's builder extends it. */
	private static final class Builder extends AbstractPartitionedLimiter.Builder<Builder, HttpServletRequest> {

		@Override
		protected Builder self() {
			return this;
		}

	}

}

package dev.ratelimit.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;

import dev.ratelimit.budget.Amount;
import dev.ratelimit.budget.BudgetWindow;
import dev.ratelimit.budget.OnError;
import dev.ratelimit.budget.OnOverrun;
import dev.ratelimit.concurrency.AdaptiveLimit;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Priority;
import dev.ratelimit.core.AbstractLimit;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.web.ForwardedHeader;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.MissingKeyAction;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.Refill;
import dev.ratelimit.core.Visibility;
import dev.ratelimit.web.HeaderMode;

/**
 * Configuration properties of the rate limiter. Refill rates, budget windows,
 * time zones and amounts are typed, so that a malformed value fails binding with
 * the property's name; once bound, every property is checked in one pass (see
 * {@link #afterPropertiesSet()}) before any bean uses them.
 */
@ConfigurationProperties("rate-limit")
public class RateLimitProperties implements InitializingBean {

	/**
	 * Whether rate limiting is enabled. When false no limiter, aspect or filter is
	 * created and annotations have no effect.
	 */
	private boolean enabled = true;

	/**
	 * Where limiter state is kept: in this process, or in Redis (shared by every
	 * instance; requires spring-boot-starter-data-redis).
	 */
	private Backend backend = Backend.MEMORY;

	/**
	 * Prefix of every storage key, so that the limiter's keys stand apart in a
	 * shared Redis.
	 */
	private String keyPrefix = "rl";

	/**
	 * Longest caller key kept readable in storage keys; longer ones are replaced by
	 * their SHA-256 hash.
	 */
	private int maxKeyLength = LimitKeys.DEFAULT_MAX_LENGTH;

	private final ClientIp clientIp = new ClientIp();

	/**
	 * Named policies, referenced by @RateLimited and by route rules.
	 */
	private Map<String, Policy> policies = new LinkedHashMap<>();

	/**
	 * Route rules enforced by the servlet filter before a request reaches a
	 * controller.
	 */
	private List<Route> routes = new ArrayList<>();

	/**
	 * Named cost budgets, referenced by @CostBudget and the CostBudgets API.
	 */
	private Map<String, Budget> budgets = new LinkedHashMap<>();

	/**
	 * Named concurrency caps, referenced by @Concurrency.
	 */
	private Map<String, ConcurrencyCap> concurrency = new LinkedHashMap<>();

	/**
	 * Named clients of providers this application calls (a model API, a payment
	 * gateway): the provider's rate and parallel-request cap, retries, and the
	 * provider's pauses.
	 */
	private Map<String, Client> clients = new LinkedHashMap<>();

	private final Headers headers = new Headers();

	private final Memory memory = new Memory();

	private final HeavyHitters heavyHitters = new HeavyHitters();

	private final Filter filter = new Filter();

	private final Aspect aspect = new Aspect();

	private final Redis redis = new Redis();

	private final Web web = new Web();

	private final Observations observations = new Observations();
	private final Metrics metrics = new Metrics();

	/**
	 * Retry-After sent with a 503 when a fail-closed policy's backend cannot
	 * answer.
	 */
	private Duration unavailableRetryAfter = Duration.ofSeconds(1);

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Backend getBackend() {
		return this.backend;
	}

	public void setBackend(Backend backend) {
		this.backend = backend;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public int getMaxKeyLength() {
		return this.maxKeyLength;
	}

	public void setMaxKeyLength(int maxKeyLength) {
		this.maxKeyLength = maxKeyLength;
	}

	/**
	 * Former name of rate-limit.client-ip.trusted-proxies, still bound to it so
	 * that a configuration written for it keeps trusting its proxies.
	 * @return the trusted proxies
	 * @deprecated use {@code rate-limit.client-ip.trusted-proxies}
	 */
	@Deprecated
	@DeprecatedConfigurationProperty(replacement = "rate-limit.client-ip.trusted-proxies",
			reason = "Client address settings are grouped under rate-limit.client-ip")
	public List<String> getTrustedProxies() {
		return this.clientIp.getTrustedProxies();
	}

	/**
	 * Sets the former name of rate-limit.client-ip.trusted-proxies.
	 * @param trustedProxies the trusted proxies
	 * @deprecated use {@code rate-limit.client-ip.trusted-proxies}
	 */
	@Deprecated
	public void setTrustedProxies(List<String> trustedProxies) {
		this.clientIp.setTrustedProxies(trustedProxies);
	}

	public ClientIp getClientIp() {
		return this.clientIp;
	}

	public Map<String, Policy> getPolicies() {
		return this.policies;
	}

	public void setPolicies(Map<String, Policy> policies) {
		this.policies = policies;
	}

	public Map<String, ConcurrencyCap> getConcurrency() {
		return this.concurrency;
	}

	public void setConcurrency(Map<String, ConcurrencyCap> concurrency) {
		this.concurrency = concurrency;
	}

	public Map<String, Client> getClients() {
		return this.clients;
	}

	public void setClients(Map<String, Client> clients) {
		this.clients = clients;
	}

	public Map<String, Budget> getBudgets() {
		return this.budgets;
	}

	public void setBudgets(Map<String, Budget> budgets) {
		this.budgets = budgets;
	}

	public List<Route> getRoutes() {
		return this.routes;
	}

	public void setRoutes(List<Route> routes) {
		this.routes = routes;
	}

	public Headers getHeaders() {
		return this.headers;
	}

	public Memory getMemory() {
		return this.memory;
	}

	public HeavyHitters getHeavyHitters() {
		return this.heavyHitters;
	}

	public Filter getFilter() {
		return this.filter;
	}

	public Aspect getAspect() {
		return this.aspect;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public Web getWeb() {
		return this.web;
	}

	public Observations getObservations() {
		return this.observations;
	}

	public Metrics getMetrics() {
		return this.metrics;
	}

	public Duration getUnavailableRetryAfter() {
		return this.unavailableRetryAfter;
	}

	public void setUnavailableRetryAfter(Duration unavailableRetryAfter) {
		this.unavailableRetryAfter = unavailableRetryAfter;
	}

	/**
	 * Checks every property once the properties are bound, reporting each invalid
	 * value with its property's name before any bean uses them.
	 * @throws dev.ratelimit.core.RateLimitConfigurationException if a value is invalid
	 */
	@Override
	public void afterPropertiesSet() {
		RateLimitPropertiesValidator.validate(this);
	}

	/**
	 * Where limiter state is kept.
	 */
	public enum Backend {

		/**
		 * In this process: exact for one instance, each instance counts separately.
		 */
		MEMORY,

		/**
		 * In Redis, through the application's RedisConnectionFactory: one limit
		 * shared exactly by every instance.
		 */
		REDIS

	}

	/**
	 * When a write to Redis counts: once the primary applied it, or once its
	 * replicas hold it too.
	 */
	public enum Acknowledgement {

		/**
		 * When the primary answers: a failover may lose what it had not yet sent
		 * its replicas.
		 */
		PRIMARY,

		/**
		 * When rate-limit.redis.durability.replicas replicas of the primary hold it
		 * (WAIT): a failover loses nothing counted. One more round trip per write;
		 * where the replicas do not answer in time the write follows the failure
		 * mode.
		 */
		REPLICATED

	}

	/**
	 * How the client address of the ip key is found and keyed.
	 */
	public static class ClientIp {

		/**
		 * Addresses or CIDR ranges of the reverse proxies whose forwarded header is
		 * believed. Empty means the direct peer is always the client. Leave it
		 * empty when server.forward-headers-strategy is set: the server then
		 * rewrites the peer address itself.
		 */
		private List<String> trustedProxies = new ArrayList<>();

		/**
		 * Header in which the trusted proxies name the client: x-forwarded-for, or
		 * forwarded (RFC 7239). Only this header is read.
		 */
		private ForwardedHeader forwardedHeader = ForwardedHeader.X_FORWARDED_FOR;

		/**
		 * Prefix length by which IPv6 clients are keyed: every address of the same
		 * network shares one ip key. The default, 64, is one subnet, so a host
		 * cannot escape its limit by moving through the addresses of its subnet;
		 * 128 keys each address on its own.
		 */
		private int ipv6PrefixLength = 64;

		/**
		 * Prefix length by which IPv4 clients are keyed; 32 keys each address on its
		 * own, 24 every address of a /24 together.
		 */
		private int ipv4PrefixLength = 32;

		public List<String> getTrustedProxies() {
			return this.trustedProxies;
		}

		public void setTrustedProxies(List<String> trustedProxies) {
			this.trustedProxies = trustedProxies;
		}

		public ForwardedHeader getForwardedHeader() {
			return this.forwardedHeader;
		}

		public void setForwardedHeader(ForwardedHeader forwardedHeader) {
			this.forwardedHeader = forwardedHeader;
		}

		public int getIpv6PrefixLength() {
			return this.ipv6PrefixLength;
		}

		public void setIpv6PrefixLength(int ipv6PrefixLength) {
			this.ipv6PrefixLength = ipv6PrefixLength;
		}

		public int getIpv4PrefixLength() {
			return this.ipv4PrefixLength;
		}

		public void setIpv4PrefixLength(int ipv4PrefixLength) {
			this.ipv4PrefixLength = ipv4PrefixLength;
		}

	}

	/**
	 * What every kind of limit is configured with: its key, its failure mode and
	 * its visibility. Each kind adds its own properties and says what its failure
	 * mode means for it.
	 */
	public abstract static class LimitProperties {

		/**
		 * Key expression: whose calls are counted together, or charged to one
		 * budget: ip, principal, global, header('Name'), or any SpEL expression over
		 * the request (#request) and, for annotated methods, the method arguments
		 * (#name), for example header('X-Tenant-Id') or #tenant.
		 */
		private String key = AbstractLimit.DEFAULT_KEY;

		/**
		 * What happens when the limit's store cannot answer: local decides the call
		 * in this instance until the store answers again, closed rejects it with 503,
		 * open lets it run unlimited. Rate-limit policies and concurrency caps default
		 * to local, budgets to closed.
		 */
		private FailureMode failureMode;

		/**
		 * Whether the limit is told to callers (a policy in the RateLimit header
		 * fields, a budget in the Budget-Remaining field) and named in refusals: auto
		 * tells it when it is keyed by the caller (any key but global) and enforced on
		 * the request itself (a route rule or the handler method, not a service it
		 * calls); public always; internal never (a refusal then reads as a temporary
		 * reduction of capacity).
		 */
		private Visibility visibility = Visibility.AUTO;

		/**
		 * Expression naming the caller's plan (tier), evaluated per call like a key:
		 * header('X-Plan') only behind a gateway that sets it, better a bean that
		 * looks it up, such as @plans.of(#tenant) or @plans.of(header('X-User-Id')).
		 * Requires plans and default-plan.
		 */
		private @Nullable String plan;

		/**
		 * The plan of callers whose plan expression yields nothing, fails or names
		 * a plan that is not configured; such calls are counted in the
		 * rate.limit.plan.defaulted metric.
		 */
		private @Nullable String defaultPlan;

		/**
		 * Plans (tiers) by name, each with the numbers it changes: capacity, refill
		 * and window for a rate-limit policy, amount for a budget, permits for a
		 * concurrency cap. Every plan shares the limit's name, key and storage, so a
		 * caller that changes plan keeps its state under the new plan's numbers.
		 */
		private Map<String, QuotaProperties> plans = new LinkedHashMap<>();

		/**
		 * Fixed numbers for listed key values (a partner's API key, an internal
		 * tenant), winning over any plan; map keys are the key values, in brackets
		 * when they hold characters other than letters, digits and '-', e.g.
		 * "[partner.key-1]". Numbers not set come from the limit itself.
		 */
		private Map<String, QuotaProperties> overrides = new LinkedHashMap<>();

		/**
		 * Calls the limit does not apply to.
		 */
		private final Exempt exempt = new Exempt();

		/**
		 * Creates the properties of a limit of one kind.
		 * @param defaultFailureMode the kind's failure mode when none is set
		 */
		protected LimitProperties(FailureMode defaultFailureMode) {
			this.failureMode = defaultFailureMode;
		}

		public String getKey() {
			return this.key;
		}

		public void setKey(String key) {
			this.key = key;
		}

		public FailureMode getFailureMode() {
			return this.failureMode;
		}

		public void setFailureMode(FailureMode failureMode) {
			this.failureMode = failureMode;
		}

		public Visibility getVisibility() {
			return this.visibility;
		}

		public void setVisibility(Visibility visibility) {
			this.visibility = visibility;
		}

		public @Nullable String getPlan() {
			return this.plan;
		}

		public void setPlan(@Nullable String plan) {
			this.plan = plan;
		}

		public @Nullable String getDefaultPlan() {
			return this.defaultPlan;
		}

		public void setDefaultPlan(@Nullable String defaultPlan) {
			this.defaultPlan = defaultPlan;
		}

		public Map<String, QuotaProperties> getPlans() {
			return this.plans;
		}

		public void setPlans(Map<String, QuotaProperties> plans) {
			this.plans = plans;
		}

		public Map<String, QuotaProperties> getOverrides() {
			return this.overrides;
		}

		public void setOverrides(Map<String, QuotaProperties> overrides) {
			this.overrides = overrides;
		}

		public Exempt getExempt() {
			return this.exempt;
		}

		/**
		 * Sets the kind's numbers that are not set from a quota: the default plan's,
		 * so that a limit defined only by its plans needs no numbers of its own.
		 * @param quota the quota
		 */
		protected abstract void fillFrom(QuotaProperties quota);

	}

	/**
	 * The numbers a plan or a key override changes; each kind takes its own and
	 * refuses the others.
	 */
	public static class QuotaProperties {

		/**
		 * A rate-limit policy's capacity.
		 */
		private @Nullable Long capacity;

		/**
		 * A rate-limit policy's refill, as tokens/period, e.g. 10/1s.
		 */
		private @Nullable Refill refill;

		/**
		 * A rate-limit policy's window (window algorithms).
		 */
		private @Nullable Duration window;

		/**
		 * A budget's amount per window (budgets with one window).
		 */
		private @Nullable Amount amount;

		/**
		 * A concurrency cap's permits.
		 */
		private @Nullable Integer permits;

		public @Nullable Long getCapacity() {
			return this.capacity;
		}

		public void setCapacity(@Nullable Long capacity) {
			this.capacity = capacity;
		}

		public @Nullable Refill getRefill() {
			return this.refill;
		}

		public void setRefill(@Nullable Refill refill) {
			this.refill = refill;
		}

		public @Nullable Duration getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable Duration window) {
			this.window = window;
		}

		public @Nullable Amount getAmount() {
			return this.amount;
		}

		public void setAmount(@Nullable Amount amount) {
			this.amount = amount;
		}

		public @Nullable Integer getPermits() {
			return this.permits;
		}

		public void setPermits(@Nullable Integer permits) {
			this.permits = permits;
		}

		/**
		 * Returns the quota these properties describe.
		 * @return the quota
		 */
		public Quota toQuota() {
			return new Quota(this.capacity, this.refill,
					(this.window != null) ? this.window.toNanos() / 1_000L : null,
					(this.amount != null) ? this.amount.micros() : null, this.permits);
		}

	}

	/**
	 * When a limit does not apply: any one condition suffices.
	 */
	public static class Exempt {

		/**
		 * Client address ranges (CIDR, e.g. 10.0.0.0/8 or 2001:db8::/32) exempt from
		 * the limit, matched against the client address the ip key is made from
		 * (trusted proxies honoured), before masking.
		 */
		private List<String> cidrs = new ArrayList<>();

		/**
		 * Roles exempt from the limit, as the servlet request's isUserInRole reads
		 * them (Spring Security: an authority ROLE_ADMIN is the role ADMIN).
		 */
		private List<String> roles = new ArrayList<>();

		/**
		 * A condition (SpEL, over the same values as a key expression) under which
		 * the limit does not apply, e.g. header('X-Internal') == 'true' behind a
		 * gateway that strips it. A condition that fails to evaluate is false.
		 */
		private @Nullable String when;

		public List<String> getCidrs() {
			return this.cidrs;
		}

		public void setCidrs(List<String> cidrs) {
			this.cidrs = cidrs;
		}

		public List<String> getRoles() {
			return this.roles;
		}

		public void setRoles(List<String> roles) {
			this.roles = roles;
		}

		public @Nullable String getWhen() {
			return this.when;
		}

		public void setWhen(@Nullable String when) {
			this.when = when;
		}

	}

	/**
	 * A named policy. With failure-mode local, an in-memory limiter of the same
	 * policy decides until the backend answers again, each instance enforcing its
	 * share (local-instances).
	 */
	public static class Policy extends LimitProperties {

		/**
		 * Algorithm that decides.
		 */
		private Algorithm algorithm = Algorithm.TOKEN_BUCKET;

		/**
		 * Capacity: the bucket size (largest burst or queue), or the limit per
		 * window; also the quota advertised in the headers.
		 */
		private @Nullable Long capacity;

		/**
		 * Refill rate of the bucket algorithms as tokens/period, for example 10/1s,
		 * 100/1m or 5/500ms: tokens added (token bucket), drained (leaky bucket) or
		 * served (shaping leaky bucket) per period.
		 */
		private @Nullable Refill refill;

		/**
		 * Window of the window algorithms (fixed-window, sliding-window-log,
		 * sliding-window-counter), for example 1s, 1m or 1d.
		 */
		private @Nullable Duration window;

		/**
		 * With failure-mode local, the number of application instances sharing the
		 * policy: while the backend is down each instance enforces this share of the
		 * capacity and rate.
		 */
		private int localInstances = 1;

		/**
		 * Whether the policy runs in shadow mode: it decides and reports (metrics,
		 * optionally headers) but never rejects a request.
		 */
		private boolean shadow;

		/**
		 * Wait mode (token-bucket and leaky-bucket): how long a caller over the
		 * limit waits for its turn instead of being rejected. Its place is reserved
		 * at once; beyond this bound it is rejected. Zero rejects at once.
		 */
		private Duration maxWait = Duration.ZERO;

		/**
		 * What happens when the key cannot be resolved: shared counts the request
		 * against one bucket shared by all such requests, allow skips this policy,
		 * reject answers 400.
		 */
		private MissingKeyAction missingKey = MissingKeyAction.SHARED;

		/**
		 * Prefetch mode (token-bucket and fixed-window, Redis backend): tokens an
		 * instance takes from Redis in one call and spends locally, so that only one
		 * call in this many reaches Redis. Across N instances at most prefetch × N
		 * calls more than the limit can pass in any interval (token bucket); a fixed
		 * window never passes more than its limit. Zero, the default, asks Redis on
		 * every call.
		 */
		private long prefetch;

		public Policy() {
			super(FailureMode.LOCAL);
		}

		public Algorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		@Override
		protected void fillFrom(QuotaProperties quota) {
			if (this.capacity == null) {
				this.capacity = quota.getCapacity();
			}
			if (this.refill == null && this.window == null) {
				this.refill = quota.getRefill();
				this.window = quota.getWindow();
			}
		}

		public @Nullable Duration getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable Duration window) {
			this.window = window;
		}

		public @Nullable Long getCapacity() {
			return this.capacity;
		}

		public void setCapacity(@Nullable Long capacity) {
			this.capacity = capacity;
		}

		public @Nullable Refill getRefill() {
			return this.refill;
		}

		public void setRefill(@Nullable Refill refill) {
			this.refill = refill;
		}

		public int getLocalInstances() {
			return this.localInstances;
		}

		public void setLocalInstances(int localInstances) {
			this.localInstances = localInstances;
		}

		public Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(Duration maxWait) {
			this.maxWait = maxWait;
		}

		public boolean isShadow() {
			return this.shadow;
		}

		public void setShadow(boolean shadow) {
			this.shadow = shadow;
		}

		public long getPrefetch() {
			return this.prefetch;
		}

		public void setPrefetch(long prefetch) {
			this.prefetch = prefetch;
		}

		public MissingKeyAction getMissingKey() {
			return this.missingKey;
		}

		public void setMissingKey(MissingKeyAction missingKey) {
			this.missingKey = missingKey;
		}

	}

	/**
	 * A route rule enforced by the servlet filter.
	 */
	public static class Route {

		/**
		 * Path pattern within the application, in Spring's PathPattern syntax, for
		 * example /api/** or /orders/{id}.
		 */
		private @Nullable String pattern;

		/**
		 * HTTP methods the rule applies to; empty means every method.
		 */
		private List<String> methods = new ArrayList<>();

		/**
		 * Names of the policies applied to matching requests.
		 */
		private List<String> policies = new ArrayList<>();

		/**
		 * Names of concurrency caps (rate-limit.concurrency) whose permit each
		 * matching request holds until its response is complete: a fixed cap, or an
		 * adaptive cap protecting the whole path (/**) from overload. Taken after the
		 * policies.
		 */
		private List<String> concurrency = new ArrayList<>();

		/**
		 * Response statuses that count against the rule's policies (counting by
		 * outcome), for example [401, 403] for failed logins. Each request takes its
		 * units before it runs and gets them back once the response is complete if
		 * its status is not listed; an exception from the application counts as 500.
		 * Empty means every request counts.
		 */
		private List<Integer> countOn = new ArrayList<>();

		public @Nullable String getPattern() {
			return this.pattern;
		}

		public void setPattern(@Nullable String pattern) {
			this.pattern = pattern;
		}

		public List<String> getMethods() {
			return this.methods;
		}

		public List<String> getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(List<String> concurrency) {
			this.concurrency = concurrency;
		}

		public void setMethods(List<String> methods) {
			this.methods = methods;
		}

		public List<String> getPolicies() {
			return this.policies;
		}

		public void setPolicies(List<String> policies) {
			this.policies = policies;
		}

		public List<Integer> getCountOn() {
			return this.countOn;
		}

		public void setCountOn(List<Integer> countOn) {
			this.countOn = countOn;
		}

	}

	/**
	 * Response header settings.
	 */
	public static class Headers {

		/**
		 * Which rate-limit header fields limited responses carry: ietf
		 * (RateLimit-Policy and RateLimit), legacy (X-RateLimit-*), both, or none.
		 */
		private HeaderMode mode = HeaderMode.IETF;

		/**
		 * Whether shadow policies appear in the rate-limit header fields too. Off by
		 * default, so that clients never see a limit that is not enforced.
		 */
		private boolean includeShadow;

		public HeaderMode getMode() {
			return this.mode;
		}

		public void setMode(HeaderMode mode) {
			this.mode = mode;
		}

		public boolean isIncludeShadow() {
			return this.includeShadow;
		}

		public void setIncludeShadow(boolean includeShadow) {
			this.includeShadow = includeShadow;
		}

	}

	/**
	 * Each limit's heaviest keys, listed by {@code GET
	 * /actuator/ratelimits/{policy}/top}.
	 */
	public static class HeavyHitters {

		/**
		 * Whether each instance keeps, per limit, the keys refused most and the keys
		 * that consumed most over the recent window.
		 */
		private boolean enabled = true;

		/**
		 * Keys each limit's sketches track, from 8 to 4096: fixed memory per limit
		 * (about 100 bytes per key, four sketches per stripe of threads, twice the
		 * processors and at most 16 stripes), whatever the number of keys. Every key heavier
		 * than the lightest tracked one is listed, with a count never below the truth.
		 */
		private int trackedKeys = 64;

		/**
		 * How long a window lasts; a list covers the last one to two windows, at
		 * least 1s.
		 */
		private Duration window = Duration.ofMinutes(1);

		/**
		 * Keys listed per ranking, from 1 to tracked-keys.
		 */
		private int listed = 10;

		/**
		 * Whether keys are listed as a hash ({@code sha256:} and 16 hex digits of the
		 * SHA-256 of the caller's key) instead of as the key expression produced
		 * them, for privacy: an operator can still hash a known key to find it.
		 */
		private boolean hashKeys;

		/**
		 * How often each instance publishes its counts for the fleet, with the Redis
		 * backend: its heavy hitters and each plan's recent callers; at least 1s.
		 */
		private Duration publishInterval = Duration.ofSeconds(10);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getTrackedKeys() {
			return this.trackedKeys;
		}

		public void setTrackedKeys(int trackedKeys) {
			this.trackedKeys = trackedKeys;
		}

		public Duration getWindow() {
			return this.window;
		}

		public void setWindow(Duration window) {
			this.window = window;
		}

		public int getListed() {
			return this.listed;
		}

		public void setListed(int listed) {
			this.listed = listed;
		}

		public boolean isHashKeys() {
			return this.hashKeys;
		}

		public void setHashKeys(boolean hashKeys) {
			this.hashKeys = hashKeys;
		}

		public Duration getPublishInterval() {
			return this.publishInterval;
		}

		public void setPublishInterval(Duration publishInterval) {
			this.publishInterval = publishInterval;
		}

	}

	/**
	 * In-memory backend settings.
	 */
	public static class Memory {

		/**
		 * Most keys kept per rate-limit policy and per concurrency cap. A key is
		 * dropped only once forgetting it changes nothing (its bucket is full again,
		 * its window over, no call in flight); while a policy holds this many keys
		 * that still matter, new keys share its overflow slots, each limited like
		 * one key of the policy. With the Redis backend it bounds the local fallback
		 * and the local caps.
		 */
		private long maxKeys = 100_000;

		/**
		 * Most keys kept per budget. A key is dropped only once its windows have
		 * ended and its reservations expired, so spend is never forgotten inside its
		 * window; while a budget holds this many keys, new keys share its overflow
		 * slots, each holding the budget's amounts. With the Redis backend it bounds
		 * the local fallback.
		 */
		private long maxBudgetKeys = 100_000;

		/**
		 * Overflow slots per policy, budget and cap of the in-memory stores, from 1
		 * to 1048576: the states new keys share, chosen by a secret hash of the key,
		 * while the policy holds its bound of keys. Each is limited like one key, so
		 * that a flood of new keys makes nobody unlimited; more slots refuse fewer
		 * newcomers early. Allocated at a policy's first overflow.
		 */
		private int overflowSlots = 1024;

		public long getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(long maxKeys) {
			this.maxKeys = maxKeys;
		}

		public long getMaxBudgetKeys() {
			return this.maxBudgetKeys;
		}

		public void setMaxBudgetKeys(long maxBudgetKeys) {
			this.maxBudgetKeys = maxBudgetKeys;
		}

		public int getOverflowSlots() {
			return this.overflowSlots;
		}

		public void setOverflowSlots(int overflowSlots) {
			this.overflowSlots = overflowSlots;
		}

	}

	/**
	 * Servlet filter settings.
	 */
	public static class Filter {

		/**
		 * Order of the rate-limit filter in the servlet filter chain. The default
		 * runs right after Spring Security's filter chain (order -100), so that
		 * principal keys see the authenticated user.
		 */
		private int order = -99;

		/**
		 * Whether the concurrency caps of route rules also count requests to the
		 * actuator's endpoints (management.endpoints.web.base-path, on the
		 * application's port). Off by default, so that a full cap on /** or an
		 * adaptive cap shedding never refuses a health probe; the route rules'
		 * rate limits apply to those requests either way.
		 */
		private boolean capManagementEndpoints;

		public int getOrder() {
			return this.order;
		}

		public void setOrder(int order) {
			this.order = order;
		}

		public boolean isCapManagementEndpoints() {
			return this.capManagementEndpoints;
		}

		public void setCapManagementEndpoints(boolean capManagementEndpoints) {
			this.capManagementEndpoints = capManagementEndpoints;
		}

	}

	/**
	 * Aspect settings.
	 */
	public static class Aspect {

		/**
		 * Order of the advice enforcing @RateLimited, @CostBudget and @Concurrency
		 * among other advice on the same method; lower runs first. The default runs it
		 * outside transaction, cache and retry advice, so a rejected call starts none
		 * of them.
		 */
		private int order = 0;

		public int getOrder() {
			return this.order;
		}

		public void setOrder(int order) {
			this.order = order;
		}

	}

	/**
	 * Micrometer metrics settings.
	 */
	public static class Metrics {

		/**
		 * Share of a key's allowance, in percent from 1 to 99, beyond whose use an
		 * allowed decision counts in rate.limit.near.limit: with 80, a decision that
		 * left the key less than 20% of its capacity (a rate limit's tokens, a
		 * budget's amount) is near the limit.
		 */
		private int nearLimit = 80;

		public int getNearLimit() {
			return this.nearLimit;
		}

		public void setNearLimit(int nearLimit) {
			this.nearLimit = nearLimit;
		}

	}

	/**
	 * Servlet integration settings.
	 */
	public static class Web {

		private final ExceptionResolver exceptionResolver = new ExceptionResolver();

		/**
		 * Whether limited @Controller methods are enforced through a CGLIB proxy of the
		 * controller, as other beans' methods are. By default (false) Spring MVC's handler
		 * adapter enforces them as it invokes the handler method, and a controller whose
		 * limited methods are all request handler methods gets no proxy: a Java call of such
		 * a method, not through Spring MVC, is then not limited. True also limits those
		 * direct calls, at the cost of the proxies at start-up.
		 */
		private boolean controllerProxies;

		public ExceptionResolver getExceptionResolver() {
			return this.exceptionResolver;
		}

		public boolean isControllerProxies() {
			return this.controllerProxies;
		}

		public void setControllerProxies(boolean controllerProxies) {
			this.controllerProxies = controllerProxies;
		}

		/**
		 * Settings of the answer to limiter exceptions thrown inside Spring MVC.
		 */
		public static class ExceptionResolver {

			/**
			 * Whether limiter exceptions thrown inside Spring MVC (by an annotation on a
			 * controller or on a service it calls) are answered by the RejectionHandler,
			 * ahead of the application's own exception handlers. When false they reach the
			 * application's @ExceptionHandler methods, and are a 500 where none handles
			 * them. Route-rule refusals are answered by the RejectionHandler either way.
			 */
			private boolean enabled = true;

			public boolean isEnabled() {
				return this.enabled;
			}

			public void setEnabled(boolean enabled) {
				this.enabled = enabled;
			}

		}

	}

	/**
	 * Settings of what the limits show in traces, through the application's
	 * ObservationRegistry.
	 */
	public static class Observations {

		/**
		 * Whether every decision of a limit is recorded on the current observation
		 * (the HTTP request's, in a trace), as an event and key values of the policy,
		 * the outcome and the units remaining. Only applies when the application has
		 * an ObservationRegistry.
		 */
		private boolean enabled = true;

		/**
		 * Whether the caller's key (an IP address, a user, an API key: whatever the
		 * key expression yields) is recorded too, as
		 * rate.limit.<kind>.<name>.key. Off by default: traces are often kept longer
		 * and read by more people than the limiter's own store.
		 */
		private boolean includeKey = false;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public boolean isIncludeKey() {
			return this.includeKey;
		}

		public void setIncludeKey(boolean includeKey) {
			this.includeKey = includeKey;
		}

	}

	/**
	 * Redis backend settings.
	 */
	public static class Redis {

		/**
		 * How long Redis may send nothing while limiter calls wait for it before it
		 * counts as not answering: the calls waiting fail, each limit's failure mode
		 * applies, and later calls fail at once until Redis answers a probe. With
		 * Lettuce it is measured on the thread that reads Redis's replies, after it
		 * has read them, so an application too busy to read a reply in time does not
		 * count; with another client it is that client's own timeout.
		 */
		private Duration timeout = Duration.ofMillis(250);

		/**
		 * Longest a limiter call waits for its reply in all, while Redis answers
		 * other calls but not this one yet (a Redis or an application so busy that
		 * replies queue); after it the call fails and the limit's failure mode
		 * applies (Lettuce only).
		 */
		private Duration busyTimeout = Duration.ofSeconds(2);

		/**
		 * Longest wait for the limiter's connection to open (DNS, TCP, TLS and
		 * handshake) and its scripts to load, at start-up and on every reconnect
		 * (Lettuce). Start-up waits at most this long; a Redis that has not answered
		 * by then does not stop the application: it starts with each policy's
		 * failure mode in force while the limiter keeps connecting in the
		 * background.
		 */
		private Duration connectTimeout = Duration.ofSeconds(2);

		/**
		 * Whether to load the limiter's Lua scripts into Redis as one function
		 * library (FUNCTION LOAD, on every master of a cluster) and call them with
		 * FCALL, which costs the server less per decision than EVALSHA (Lettuce
		 * only). Where Redis refuses functions (before 7, or forbidden by an ACL or a
		 * managed service) the scripts go as EVALSHA anyway; false always sends
		 * EVALSHA, for proxies that do not know FCALL.
		 */
		private boolean functions = true;

		/**
		 * How often each instance checks Redis for run-time overrides of the limits'
		 * numbers made on another instance (through the ratelimits endpoint). One
		 * GET of a version number per check; the overrides themselves are read only
		 * when it changed. An override applies on every instance within about this
		 * long.
		 */
		private Duration overridesPollInterval = Duration.ofMillis(250);

		/**
		 * How often the limiter reads a Redis Cluster's topology when nothing
		 * triggered a refresh. Whatever the application's client options say, the
		 * limiter's connection also reads it on every MOVED or ASK redirect,
		 * uncovered slot or unknown node (at most every 500 ms), when a node ends its
		 * connection, and while calls on a node fail (every 250 ms).
		 */
		private Duration topologyRefreshPeriod = Duration.ofSeconds(10);

		private final DenyCache denyCache = new DenyCache();

		private final Prefetch prefetch = new Prefetch();

		private final Coalescing coalescing = new Coalescing();

		private final Durability durability = new Durability();

		public Durability getDurability() {
			return this.durability;
		}

		public Duration getTopologyRefreshPeriod() {
			return this.topologyRefreshPeriod;
		}

		public void setTopologyRefreshPeriod(Duration topologyRefreshPeriod) {
			this.topologyRefreshPeriod = topologyRefreshPeriod;
		}

		public DenyCache getDenyCache() {
			return this.denyCache;
		}

		public Prefetch getPrefetch() {
			return this.prefetch;
		}

		public Coalescing getCoalescing() {
			return this.coalescing;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public Duration getBusyTimeout() {
			return this.busyTimeout;
		}

		public void setBusyTimeout(Duration busyTimeout) {
			this.busyTimeout = busyTimeout;
		}

		public Duration getConnectTimeout() {
			return this.connectTimeout;
		}

		public void setConnectTimeout(Duration connectTimeout) {
			this.connectTimeout = connectTimeout;
		}

		public boolean isFunctions() {
			return this.functions;
		}

		public void setFunctions(boolean functions) {
			this.functions = functions;
		}

		public Duration getOverridesPollInterval() {
			return this.overridesPollInterval;
		}

		public void setOverridesPollInterval(Duration overridesPollInterval) {
			this.overridesPollInterval = overridesPollInterval;
		}

	}

	/**
	 * When the limiter's writes to Redis count, per kind of limit: once the
	 * primary applied them, or once its replicas hold them too, so that a
	 * failover loses nothing. A write waits where its primary has had replicas
	 * (a Sentinel master, a standalone server that reported a replica when the
	 * limiter connected, a Cluster shard whose master had one); Lettuce only.
	 */
	public static class Durability {

		/**
		 * When a budget's reservation, settle and release count. Replicated by
		 * default: money counted only on a primary is lost when it fails over.
		 */
		private Acknowledgement budgets = Acknowledgement.REPLICATED;

		/**
		 * When a rate limit's decision counts. Primary by default: a failover may
		 * forget the last moments' decisions, so their callers get up to that much
		 * more.
		 */
		private Acknowledgement rateLimits = Acknowledgement.PRIMARY;

		/**
		 * When a distributed concurrency cap's permit counts. Primary by default: a
		 * failover may forget permits taken in its last moments, until their calls
		 * end.
		 */
		private Acknowledgement concurrency = Acknowledgement.PRIMARY;

		/**
		 * How many replicas of the primary must hold a replicated write.
		 */
		private int replicas = 1;

		/**
		 * Longest a replicated write waits for its replicas; after it, the write
		 * follows its limit's failure mode, and later writes on that primary are
		 * refused at once until its replicas acknowledge a probe. At most half of
		 * rate-limit.redis.connect-timeout, which bounds the wait: a longer value
		 * is cut to that.
		 */
		private Duration timeout = Duration.ofMillis(250);

		public Acknowledgement getBudgets() {
			return this.budgets;
		}

		public void setBudgets(Acknowledgement budgets) {
			this.budgets = budgets;
		}

		public Acknowledgement getRateLimits() {
			return this.rateLimits;
		}

		public void setRateLimits(Acknowledgement rateLimits) {
			this.rateLimits = rateLimits;
		}

		public Acknowledgement getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(Acknowledgement concurrency) {
			this.concurrency = concurrency;
		}

		public int getReplicas() {
			return this.replicas;
		}

		public void setReplicas(int replicas) {
			this.replicas = replicas;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

	}

	/**
	 * Local cache of denials in front of the Redis backend.
	 */
	public static class DenyCache {

		/**
		 * Whether a key denied until a time is answered locally until then, without a
		 * Redis call. Exact: only calls that could not succeed before then are
		 * answered from it.
		 */
		private boolean enabled = true;

		/**
		 * Most denied keys remembered at once.
		 */
		private long maxKeys = 10_000;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public long getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(long maxKeys) {
			this.maxKeys = maxKeys;
		}

	}

	/**
	 * Prefetch mode settings; the number of tokens prefetched is set per policy
	 * ({@code rate-limit.policies.<name>.prefetch}).
	 */
	public static class Prefetch {

		/**
		 * Most keys holding prefetched tokens at once in one instance; the least
		 * recently used lose theirs (which never over-admits).
		 */
		private long maxKeys = 10_000;

		public long getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(long maxKeys) {
			this.maxKeys = maxKeys;
		}

	}

	/**
	 * Coalescing of Redis decisions (Lettuce only): decisions of every kind that
	 * wait for the same key (its hash slot) at the same moment go as one call,
	 * which applies them in order on the server, each exactly as its own call
	 * would. A decision goes at once when no call is in flight for its key, so a
	 * lone caller waits no longer; under load, one call carries what queued while
	 * the one before it was in flight.
	 */
	public static class Coalescing {

		/**
		 * Whether decisions waiting for the same key at the same moment go as one
		 * call. Off by default: it pays on hot keys (a global cap, a large tenant)
		 * under concurrency, and changes nothing measurable on many distinct keys.
		 */
		private boolean enabled;

		/**
		 * Most decisions one call carries; the rest go in the next. Bounds how long
		 * one call holds Redis (a few microseconds a decision).
		 */
		private int maxBatch = 128;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getMaxBatch() {
			return this.maxBatch;
		}

		public void setMaxBatch(int maxBatch) {
			this.maxBatch = maxBatch;
		}

	}

	/**
	 * A named cost budget. It fails closed by default: without its store nothing
	 * records the spending. Open runs calls unrecorded, local records them in an
	 * in-memory store.
	 */
	public static class Budget extends LimitProperties {

		/**
		 * Unit the amounts are counted in, shown in messages and headers, for example
		 * USD or tokens.
		 */
		private String unit = "units";

		/**
		 * Time zone of calendar windows (day, week, month), for example UTC or
		 * Europe/Berlin.
		 */
		private ZoneId zone = ZoneId.of("UTC");

		/**
		 * Amount per window for a budget with one window, as a decimal in the unit,
		 * for example 5.00; use limits for several windows.
		 */
		private @Nullable Amount amount;

		/**
		 * Window of amount: day, week, month, or a rolling duration from the first
		 * charge such as 24h. Day when unset.
		 */
		private @Nullable BudgetWindow window;

		/**
		 * Amounts per window, all checked together, for example a daily and a
		 * monthly cap.
		 */
		private List<BudgetLimit> limits = new ArrayList<>();

		/**
		 * How long a reservation lives if its caller never settles it (a crashed
		 * instance, a lost settle); then its amount returns to the budget. Longer
		 * than the slowest call the budget covers.
		 */
		private Duration reservationTimeout = Duration.ofMinutes(5);

		/**
		 * What a call that throws is charged when its actual cost cannot be computed:
		 * keep charges the estimate, release charges nothing.
		 */
		private OnError onError = OnError.KEEP;

		/**
		 * What a stream reporting its usage does when that usage would pass its
		 * reservation: stop at the reservation, or extend it (atomically, another
		 * estimate at a time) while the budget allows, and stop when it does not.
		 */
		private OnOverrun onOverrun = OnOverrun.STOP;

		public Budget() {
			super(FailureMode.CLOSED);
		}

		public String getUnit() {
			return this.unit;
		}

		public void setUnit(String unit) {
			this.unit = unit;
		}

		public ZoneId getZone() {
			return this.zone;
		}

		public void setZone(ZoneId zone) {
			this.zone = zone;
		}

		@Override
		protected void fillFrom(QuotaProperties quota) {
			if (this.amount == null && this.limits.isEmpty()) {
				this.amount = quota.getAmount();
			}
		}

		public @Nullable Amount getAmount() {
			return this.amount;
		}

		public void setAmount(@Nullable Amount amount) {
			this.amount = amount;
		}

		public @Nullable BudgetWindow getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable BudgetWindow window) {
			this.window = window;
		}

		public List<BudgetLimit> getLimits() {
			return this.limits;
		}

		public void setLimits(List<BudgetLimit> limits) {
			this.limits = limits;
		}

		public Duration getReservationTimeout() {
			return this.reservationTimeout;
		}

		public void setReservationTimeout(Duration reservationTimeout) {
			this.reservationTimeout = reservationTimeout;
		}

		public OnError getOnError() {
			return this.onError;
		}

		public void setOnError(OnError onError) {
			this.onError = onError;
		}

		public OnOverrun getOnOverrun() {
			return this.onOverrun;
		}

		public void setOnOverrun(OnOverrun onOverrun) {
			this.onOverrun = onOverrun;
		}

	}

	/**
	 * One amount of a budget and its window.
	 */
	public static class BudgetLimit {

		/**
		 * Window: day, week, month, or a rolling duration from the first charge such
		 * as 24h.
		 */
		private @Nullable BudgetWindow window;

		/**
		 * Amount per window, as a decimal in the budget's unit, for example 100.00.
		 */
		private @Nullable Amount amount;

		public @Nullable BudgetWindow getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable BudgetWindow window) {
			this.window = window;
		}

		public @Nullable Amount getAmount() {
			return this.amount;
		}

		public void setAmount(@Nullable Amount amount) {
			this.amount = amount;
		}

	}

	/**
	 * A named cap on calls in flight. Its failure mode is what a distributed cap
	 * does when Redis cannot answer (local then caps calls per instance).
	 */
	public static class ConcurrencyCap extends LimitProperties {

		/**
		 * Most calls in flight at once per key.
		 */
		private @Nullable Integer permits;

		/**
		 * How long a caller waits for a permit before it is rejected; zero rejects
		 * at once.
		 */
		private Duration maxWait = Duration.ZERO;

		/**
		 * Where permits are counted: local (this instance) or distributed (every
		 * instance, through Redis).
		 */
		private ConcurrencyPolicy.Scope scope = ConcurrencyPolicy.Scope.LOCAL;

		/**
		 * Time to live of a distributed permit: a holder that dies gives it back after
		 * this long; a live holder renews it every third of it. At least 10ms.
		 */
		private Duration permitTtl = Duration.ofSeconds(30);

		/**
		 * How a rejected caller that may see the cap is answered: too-many-requests
		 * (429) for per-caller caps, service-unavailable (503) for a shared
		 * downstream. A caller that may not see the cap always gets 503.
		 */
		private ConcurrencyPolicy.Rejection rejection = ConcurrencyPolicy.Rejection.TOO_MANY_REQUESTS;

		/**
		 * Makes the cap adaptive: its limit follows the service's latency, in this
		 * instance, and it sheds calls by priority instead of counting them per key.
		 * Setting adaptive.algorithm turns it on; permits then are not set.
		 */
		private Adaptive adaptive = new Adaptive();

		/**
		 * Adaptive caps: key expression naming each call's priority class
		 * (critical, normal, background or sheddable), for example
		 * header('X-Priority') or a SpEL expression over the principal's plan.
		 * Unset: every call is in the default priority.
		 */
		private @Nullable String priority;

		/**
		 * Adaptive caps: each priority class's guaranteed share of the limit, in
		 * percent (at most 100 in all). A class within its share is never shed;
		 * beyond it a class may use what is free except the unused shares of the
		 * classes above it, so the lowest class is shed first. A class not listed
		 * keeps its default share: critical 20, normal 10, background 5, sheddable 0
		 * (list it with 0 for none).
		 */
		private Map<Priority, Integer> shares = new LinkedHashMap<>();

		/**
		 * Adaptive caps: class of a call whose priority expression names no class
		 * (nothing, or an unknown word). The lowest by default, so that a caller
		 * cannot climb by sending a word nobody configured.
		 */
		private Priority defaultPriority = Priority.SHEDDABLE;

		/**
		 * Adaptive caps: shortest Retry-After told to a shed call, in whole seconds.
		 */
		private Duration retryAfter = Duration.ofSeconds(1);

		/**
		 * Adaptive caps: how much longer the Retry-After told to a shed call may be;
		 * each shed call draws its wait evenly from retry-after to retry-after plus
		 * this, so shed callers do not come back in step.
		 */
		private Duration retryAfterSpread = Duration.ofSeconds(4);

		/**
		 * Adaptive caps: shadow mode. The cap measures, adapts and counts the calls
		 * it would shed (rate.limit.concurrency.shed with outcome shadow), but lets
		 * them run.
		 */
		private boolean shadow;

		public ConcurrencyCap() {
			super(FailureMode.LOCAL);
		}

		@Override
		protected void fillFrom(QuotaProperties quota) {
			if (this.permits == null) {
				this.permits = quota.getPermits();
			}
		}

		public @Nullable Integer getPermits() {
			return this.permits;
		}

		public void setPermits(@Nullable Integer permits) {
			this.permits = permits;
		}

		public Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(Duration maxWait) {
			this.maxWait = maxWait;
		}

		public ConcurrencyPolicy.Scope getScope() {
			return this.scope;
		}

		public void setScope(ConcurrencyPolicy.Scope scope) {
			this.scope = scope;
		}

		public Duration getPermitTtl() {
			return this.permitTtl;
		}

		public void setPermitTtl(Duration permitTtl) {
			this.permitTtl = permitTtl;
		}

		public ConcurrencyPolicy.Rejection getRejection() {
			return this.rejection;
		}

		public void setRejection(ConcurrencyPolicy.Rejection rejection) {
			this.rejection = rejection;
		}

		public Adaptive getAdaptive() {
			return this.adaptive;
		}

		public void setAdaptive(Adaptive adaptive) {
			this.adaptive = adaptive;
		}

		public @Nullable String getPriority() {
			return this.priority;
		}

		public void setPriority(@Nullable String priority) {
			this.priority = priority;
		}

		public Map<Priority, Integer> getShares() {
			return this.shares;
		}

		public void setShares(Map<Priority, Integer> shares) {
			this.shares = shares;
		}

		public Priority getDefaultPriority() {
			return this.defaultPriority;
		}

		public void setDefaultPriority(Priority defaultPriority) {
			this.defaultPriority = defaultPriority;
		}

		public Duration getRetryAfter() {
			return this.retryAfter;
		}

		public void setRetryAfter(Duration retryAfter) {
			this.retryAfter = retryAfter;
		}

		public Duration getRetryAfterSpread() {
			return this.retryAfterSpread;
		}

		public void setRetryAfterSpread(Duration retryAfterSpread) {
			this.retryAfterSpread = retryAfterSpread;
		}

		public boolean isShadow() {
			return this.shadow;
		}

		public void setShadow(boolean shadow) {
			this.shadow = shadow;
		}

	}

	/**
	 * How an adaptive concurrency cap finds its limit: an algorithm of Netflix
	 * concurrency-limits and its settings.
	 */
	public static class Adaptive {

		/**
		 * Algorithm that moves the limit: gradient2 (follows latency against its
		 * long-term average), vegas (follows the queue estimated from the lowest
		 * latency) or aimd (grows while calls succeed, falls on failures and
		 * timeouts).
		 */
		private AdaptiveLimit.@Nullable Algorithm algorithm;

		/**
		 * Limit before any call has been measured.
		 */
		private int initialLimit = 20;

		/**
		 * Lowest the limit goes.
		 */
		private int minLimit = 1;

		/**
		 * Highest the limit goes.
		 */
		private int maxLimit = 200;

		/**
		 * A call that runs longer counts as a drop (like a failure), which lowers
		 * the limit. Zero, the default, sets no such bound.
		 */
		private Duration timeout = Duration.ZERO;

		/**
		 * gradient2 and vegas: how far each estimate moves the limit, in (0, 1];
		 * unset for the algorithm's own (gradient2 0.2, vegas 1.0).
		 */
		private @Nullable Double smoothing;

		/**
		 * gradient2: how much slower than its long-term latency the service may
		 * get before the limit falls, at least 1; unset for 1.5.
		 */
		private @Nullable Double rttTolerance;

		/**
		 * gradient2: calls the limit keeps above its estimate so that it can grow;
		 * unset for 4.
		 */
		private @Nullable Integer queueSize;

		/**
		 * aimd: share of the limit kept after a drop, in [0.5, 1); unset for 0.9.
		 */
		private @Nullable Double backoffRatio;

		/**
		 * gradient2: calls its long-term latency, the baseline each call is
		 * compared with, averages over (at least 10); unset for 600. A longer window
		 * lets the baseline creep less under sustained load.
		 */
		private @Nullable Integer longWindow;

		public @Nullable Integer getLongWindow() {
			return this.longWindow;
		}

		public void setLongWindow(@Nullable Integer longWindow) {
			this.longWindow = longWindow;
		}

		/**
		 * Returns whether a setting other than the algorithm differs from its
		 * default: it would be ignored without an algorithm.
		 * @return whether the cap was tuned
		 */
		boolean isTuned() {
			Adaptive defaults = new Adaptive();
			return this.initialLimit != defaults.initialLimit || this.minLimit != defaults.minLimit
					|| this.maxLimit != defaults.maxLimit || !defaults.timeout.equals(this.timeout)
					|| this.smoothing != null || this.rttTolerance != null || this.queueSize != null
					|| this.backoffRatio != null || this.longWindow != null;
		}

		public AdaptiveLimit.@Nullable Algorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(AdaptiveLimit.@Nullable Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		public int getInitialLimit() {
			return this.initialLimit;
		}

		public void setInitialLimit(int initialLimit) {
			this.initialLimit = initialLimit;
		}

		public int getMinLimit() {
			return this.minLimit;
		}

		public void setMinLimit(int minLimit) {
			this.minLimit = minLimit;
		}

		public int getMaxLimit() {
			return this.maxLimit;
		}

		public void setMaxLimit(int maxLimit) {
			this.maxLimit = maxLimit;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public @Nullable Double getSmoothing() {
			return this.smoothing;
		}

		public void setSmoothing(@Nullable Double smoothing) {
			this.smoothing = smoothing;
		}

		public @Nullable Double getRttTolerance() {
			return this.rttTolerance;
		}

		public void setRttTolerance(@Nullable Double rttTolerance) {
			this.rttTolerance = rttTolerance;
		}

		public @Nullable Integer getQueueSize() {
			return this.queueSize;
		}

		public void setQueueSize(@Nullable Integer queueSize) {
			this.queueSize = queueSize;
		}

		public @Nullable Double getBackoffRatio() {
			return this.backoffRatio;
		}

		public void setBackoffRatio(@Nullable Double backoffRatio) {
			this.backoffRatio = backoffRatio;
		}

	}


	/**
	 * The client of one provider.
	 */
	public static class Client {

		/**
		 * Provider's base URL. A builder from ProviderClients.builder(name) or
		 * ProviderWebClients.builder(name) starts from it, and a request of any
		 * RestClient or WebClient built by Spring Boot whose URL starts with it
		 * follows this client's rules.
		 */
		private @Nullable URI baseUrl;

		/**
		 * Rate-limit policy every attempt takes a unit of, waiting its turn: the
		 * provider's published rate. Its max-wait must be positive.
		 */
		private @Nullable String rateLimit;

		/**
		 * Concurrency cap every attempt holds a permit of until its response is
		 * closed: the provider's parallel-request ceiling.
		 */
		private @Nullable String concurrency;

		/**
		 * Most attempts of one call, the first included; 1 never retries.
		 */
		private int maxAttempts = 3;

		/**
		 * Backoff ceiling of the first retry, doubled for each further retry; the
		 * wait is a uniformly random time below the ceiling (full jitter).
		 */
		private Duration backoff = Duration.ofMillis(200);

		/**
		 * Highest backoff ceiling.
		 */
		private Duration maxBackoff = Duration.ofSeconds(10);

		/**
		 * Longest a call may take, attempts and waits included. A wait that would
		 * pass it is not made: the call ends with the provider's last answer.
		 */
		private Duration deadline = Duration.ofSeconds(30);

		/**
		 * Whether calls of every method are retried, POST and PATCH included.
		 * Only for a provider that refuses a request before processing it.
		 */
		private boolean retryNonIdempotent = false;

		/**
		 * HTTP methods retried, when retry-non-idempotent is false.
		 */
		private List<String> retryMethods = new ArrayList<>(List.of("GET", "HEAD", "OPTIONS", "PUT", "DELETE"));

		/**
		 * Most added at random to a provider's pause before calling again, so that
		 * the callers it released do not all call at the same instant.
		 */
		private Duration pauseJitter = Duration.ofMillis(500);

		public @Nullable URI getBaseUrl() {
			return this.baseUrl;
		}

		public void setBaseUrl(@Nullable URI baseUrl) {
			this.baseUrl = baseUrl;
		}

		public @Nullable String getRateLimit() {
			return this.rateLimit;
		}

		public void setRateLimit(@Nullable String rateLimit) {
			this.rateLimit = rateLimit;
		}

		public @Nullable String getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(@Nullable String concurrency) {
			this.concurrency = concurrency;
		}

		public int getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(int maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public Duration getBackoff() {
			return this.backoff;
		}

		public void setBackoff(Duration backoff) {
			this.backoff = backoff;
		}

		public Duration getMaxBackoff() {
			return this.maxBackoff;
		}

		public void setMaxBackoff(Duration maxBackoff) {
			this.maxBackoff = maxBackoff;
		}

		public Duration getDeadline() {
			return this.deadline;
		}

		public void setDeadline(Duration deadline) {
			this.deadline = deadline;
		}

		public boolean isRetryNonIdempotent() {
			return this.retryNonIdempotent;
		}

		public void setRetryNonIdempotent(boolean retryNonIdempotent) {
			this.retryNonIdempotent = retryNonIdempotent;
		}

		public List<String> getRetryMethods() {
			return this.retryMethods;
		}

		public void setRetryMethods(List<String> retryMethods) {
			this.retryMethods = retryMethods;
		}

		public Duration getPauseJitter() {
			return this.pauseJitter;
		}

		public void setPauseJitter(Duration pauseJitter) {
			this.pauseJitter = pauseJitter;
		}

	}

}

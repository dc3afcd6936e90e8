-- Decides every policy of one call, all or nothing, in one script run: the
-- Redis side of RateLimitBackend#tryConsumeAll, mirroring
-- InMemoryRateLimitBackend#decideLocked decision for decision.
--
-- KEYS[i]   the state of policy i; every key in one Redis Cluster slot
-- ARGV[1]   the current time in µs, or '' to read the server's TIME
-- ARGV[2]   '1' to take the costs when every policy allows; '0' only to look
--           (the backend asks so for slots it reaches after another denied)
-- ARGV[3..] six values per policy, in KEYS order:
--             algorithm  tb token bucket, lb leaky bucket, ls shaping leaky
--                        bucket, fw fixed window, sl sliding window log,
--                        sc sliding window counter
--             capacity
--             a, b       buckets: a refill of a units per b µs, reduced;
--                        windows: a window of a µs, b unused
--             cost       0 <= cost <= capacity, checked by the caller
--             max wait   µs a caller over the limit may wait for its turn (wait
--                        mode of the token and leaky buckets); 0 rejects
--
-- Returns six values per policy, in KEYS order: allowed (1 or 0), remaining,
-- reset after (µs), retry after (µs), delay (µs), receipt. The receipt is what
-- refund.lua needs to give a taken cost back; '' when nothing was taken.
--
-- Phase 1 decides every policy as if its cost were taken, writing nothing.
-- Phase 2 takes every cost when all allowed; otherwise the policies that did
-- not deny report their state with nothing taken (cost 0), and nothing is
-- written: bringing a state up to date changes no decision, so it can wait
-- for the next write.
--
-- A decision is the costliest part of a rate-limited request that Redis sees,
-- so this runs lean: no table per decision (the algorithms return five
-- values), and one policy alone, by far the common case, is decided in one
-- pass: its own verdict is the call's. One token bucket alone taking its cost
-- is leaner still in decide_token_bucket.lua, which RedisRateLimitBackend
-- sends instead: same decision, no table at all, two arguments.

local nowMicros = currentTimeMicros(ARGV[1])
local takeWhenAllowed = ARGV[2] == '1'
local count = #KEYS

if count == 1 then
	local policy, cost = readPolicy(ARGV, 3)
	local algorithm = policy.algorithm
	local state = algorithm.load(KEYS[1], policy, nowMicros)
	-- Taking as it decides is phase 1 and 2 at once: commit only changes the
	-- state when the policy allows, and then the call is allowed.
	local allowed, remaining, resetAfter, retryAfter, delay =
		algorithm.decide(state, policy, cost, nowMicros, takeWhenAllowed)
	local receipt = ''
	if allowed then
		if takeWhenAllowed then
			receipt = algorithm.store(state, policy, resetAfter)
		else
			allowed, remaining, resetAfter, retryAfter, delay = algorithm.decide(state, policy, 0, nowMicros, false)
		end
	end
	return { allowed and 1 or 0, remaining, resetAfter, retryAfter, delay, receipt }
end

-- The reply, six values per policy, filled in as the decisions are made.
local reply = {}
local function put(i, allowed, remaining, resetAfter, retryAfter, delay)
	local at = (i - 1) * 6
	reply[at + 1] = allowed and 1 or 0
	reply[at + 2] = remaining
	reply[at + 3] = resetAfter
	reply[at + 4] = retryAfter
	reply[at + 5] = delay
	reply[at + 6] = ''
	return allowed
end

local policies = {}
local costs = {}
local states = {}
local allAllowed = true
for i = 1, count do
	local policy, cost = readPolicy(ARGV, 3 + (i - 1) * 6)
	policies[i] = policy
	costs[i] = cost
	states[i] = policy.algorithm.load(KEYS[i], policy, nowMicros)
	if not put(i, policy.algorithm.decide(states[i], policy, cost, nowMicros, false)) then
		allAllowed = false
	end
end

for i = 1, count do
	local policy = policies[i]
	local algorithm = policy.algorithm
	if allAllowed and takeWhenAllowed then
		local allowed, remaining, resetAfter, retryAfter, delay =
			algorithm.decide(states[i], policy, costs[i], nowMicros, true)
		put(i, allowed, remaining, resetAfter, retryAfter, delay)
		reply[i * 6] = algorithm.store(states[i], policy, resetAfter)
	elseif reply[(i - 1) * 6 + 1] == 1 then
		put(i, algorithm.decide(states[i], policy, 0, nowMicros, false))
	end
end
return reply

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

local nowMicros = currentTimeMicros(ARGV[1])
local takeWhenAllowed = ARGV[2] == '1'

local policies = {}
local costs = {}
local states = {}
local decisions = {}
local allAllowed = true
for i = 1, #KEYS do
	local at = 3 + (i - 1) * 6
	local policy = readPolicy(ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 5])
	policies[i] = policy
	costs[i] = tonumber(ARGV[at + 4])
	states[i] = policy.algorithm.load(KEYS[i], policy, nowMicros)
	decisions[i] = policy.algorithm.decide(states[i], policy, costs[i], nowMicros, false)
	allAllowed = allAllowed and decisions[i].allowed
end

local reply = {}
for i = 1, #KEYS do
	local policy = policies[i]
	local receipt = ''
	if allAllowed and takeWhenAllowed then
		decisions[i] = policy.algorithm.decide(states[i], policy, costs[i], nowMicros, true)
		receipt = policy.algorithm.store(states[i], policy, decisions[i])
	elseif decisions[i].allowed then
		decisions[i] = policy.algorithm.decide(states[i], policy, 0, nowMicros, false)
	end
	appendReply(reply, decisions[i], receipt)
end
return reply

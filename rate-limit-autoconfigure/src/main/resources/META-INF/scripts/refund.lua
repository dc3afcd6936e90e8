-- Gives back what decide.lua took for policies whose call was then denied by
-- a policy in another Redis Cluster slot (RedisRateLimitBackend decides slot by
-- slot). Each algorithm refunds in its own way, see the receipts in their
-- files; a refund never gives back more than the call took, and never what
-- has since stopped counting (a window that passed, an entry that expired).
--
-- KEYS[i]   the state of policy i; every key in one Redis Cluster slot
-- ARGV[1]   the current time in µs, or '' to read the server's TIME
-- ARGV[2..] seven values per policy, in KEYS order: algorithm, capacity, a, b,
--           the cost taken, max wait (as for decide.lua), and decide.lua's receipt
--
-- Returns six values per policy, as decide.lua does: the state after the
-- refund, reported as an allowed decision of cost 0, and an empty receipt.

local nowMicros = currentTimeMicros(ARGV[1])

local reply = {}
for i = 1, #KEYS do
	local at = 2 + (i - 1) * 7
	local policy, cost = readPolicy(ARGV, at)
	local algorithm = policy.algorithm
	local state = algorithm.load(KEYS[i], policy, nowMicros)
	-- Up to date first, so that the refund applies to the state as it is now.
	algorithm.decide(state, policy, 0, nowMicros, false)
	algorithm.refund(state, policy, cost, ARGV[at + 6], nowMicros)
	local allowed, remaining, resetAfter, retryAfter, delay = algorithm.decide(state, policy, 0, nowMicros, false)
	algorithm.store(state, policy, resetAfter)
	local out = (i - 1) * 6
	reply[out + 1] = allowed and 1 or 0
	reply[out + 2] = remaining
	reply[out + 3] = resetAfter
	reply[out + 4] = retryAfter
	reply[out + 5] = delay
	reply[out + 6] = ''
end
return reply

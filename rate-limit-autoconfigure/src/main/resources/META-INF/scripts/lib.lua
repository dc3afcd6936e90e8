-- Helpers shared by every algorithm. dev.ratelimit.redis.LuaScripts composes
-- one script from this file, the six algorithm files and a driver (decide.lua
-- or refund.lua), so everything here is a local of that one script.
--
-- Lua numbers are doubles. Policies keep every value below 2^51 (times near
-- 2^50.7 µs, scaled capacities below 2^50), so +, - and * on them are exact;
-- only division needs care, see floorDiv.

-- Java's Math.floorDiv. The double quotient of two integers near 2^50 can be
-- one off, so step to the integer q with q * b <= a < (q + 1) * b.
local function floorDiv(a, b)
	local q = math.floor(a / b)
	if q * b > a then
		q = q - 1
	elseif (q + 1) * b <= a then
		q = q + 1
	end
	return q
end

-- LongMath.ceilDiv
local function ceilDiv(a, b)
	return -floorDiv(-a, b)
end

-- Java's % on a non-negative dividend and a positive divisor.
local function floorMod(a, b)
	return a - floorDiv(a, b) * b
end

-- Whole numbers as plain digits, for keys, fields and arguments: Redis' own
-- number-to-string conversion for redis.call arguments has changed between
-- versions, this one cannot. Adding 0 turns -0 into 0.
local function int(x)
	return string.format('%.0f', x + 0)
end

-- The clock: the time passed by the caller (tests replaying a timeline), else
-- the server's TIME, the one clock every application instance agrees on.
local function currentTimeMicros(explicit)
	if explicit ~= nil and explicit ~= '' then
		return tonumber(explicit)
	end
	-- Redis before 5 refuses writes after TIME unless effects are replicated.
	if redis.replicate_commands then
		redis.replicate_commands()
	end
	local time = redis.call('TIME')
	return tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- dev.ratelimit.core.Decision; the 5-argument form has no delay.
local function Decision(allowed, remaining, limit, resetAfterMicros, retryAfterMicros, delayMicros)
	return {
		allowed = allowed,
		remaining = remaining,
		limit = limit,
		resetAfterMicros = resetAfterMicros,
		retryAfterMicros = retryAfterMicros,
		delayMicros = delayMicros or 0,
	}
end

-- Every store ends here: a key is kept exactly until forgetting it changes
-- nothing, which is when its quota is fully restored. Rounded up to whole
-- milliseconds, it never vanishes early.
local function expireAfter(key, resetAfterMicros)
	redis.call('PEXPIRE', key, int(ceilDiv(resetAfterMicros, 1000)))
end

-- Algorithm code (as sent by RedisRateLimitBackend) to implementation; each
-- algorithm file registers itself. An implementation has
--   rateBased                            configured with a refill rather than a window
--   load(key, policy, nowMicros)         the state, or a fresh one when the key is missing
--   decide(self, policy, cost, nowMicros, commit)  the mirror of LimitState#decide
--   store(self, policy, decision)        writes a committed state and its TTL; returns the receipt
--   refund(self, policy, cost, receipt, nowMicros) gives back what a decision with that receipt took
local ALGORITHMS = {}

-- A policy from its arguments: algorithm code, capacity, then a refill of
-- a tokens per b µs (buckets) or a window of a µs (windows, b unused).
local function readPolicy(code, capacity, a, b, maxWait)
	local algorithm = ALGORITHMS[code]
	if algorithm == nil then
		return error('unknown rate limit algorithm: ' .. tostring(code))
	end
	local policy = { algorithm = algorithm, capacity = tonumber(capacity), maxWaitMicros = tonumber(maxWait) or 0 }
	if algorithm.rateBased then
		policy.tokens = tonumber(a)
		policy.periodMicros = tonumber(b)
	else
		policy.windowMicros = tonumber(a)
	end
	return policy
end

-- A decision as six reply values: allowed (1 or 0), remaining, reset after,
-- retry after, delay, receipt.
local function appendReply(reply, decision, receipt)
	reply[#reply + 1] = decision.allowed and 1 or 0
	reply[#reply + 1] = decision.remaining
	reply[#reply + 1] = decision.resetAfterMicros
	reply[#reply + 1] = decision.retryAfterMicros
	reply[#reply + 1] = decision.delayMicros
	reply[#reply + 1] = receipt
end

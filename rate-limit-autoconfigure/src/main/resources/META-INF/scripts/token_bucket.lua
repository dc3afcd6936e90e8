-- Token bucket: takes a cost from one bucket or denies, in one atomic step.
-- A line-by-line mirror of dev.ratelimit.core.TokenBucket#consume, so that the
-- in-memory and Redis backends give the same decision for the same inputs.
--
-- KEYS[1]  the bucket, a hash with
--            t   tokens scaled by the refill period (one token = P units)
--            ts  time of the last refill in microseconds
--          A missing key is a full bucket.
-- ARGV[1]  capacity in tokens
-- ARGV[2]  refill: n tokens ...
-- ARGV[3]  ... per P microseconds (n/P already reduced to lowest terms)
-- ARGV[4]  cost in tokens, 0 <= cost <= capacity (checked by the caller)
-- ARGV[5]  optional current time in microseconds; absent or empty means the
--          server's TIME. Only tests pass it, to replay a timeline exactly.
--
-- Returns {allowed (1 or 0), remaining tokens, retry_after_us, reset_after_us}.
--
-- Lua numbers are doubles. Policies keep capacity * P below 2^50 and times are
-- below 2^53, so +, - and * are exact; divisions are corrected to the exact
-- integer quotient below.

-- Java's Math.floorDiv: the double quotient can be one off near 2^50, so step
-- to the integer q with q * b <= a < (q + 1) * b.
local function floor_div(a, b)
	local q = math.floor(a / b)
	if q * b > a then
		q = q - 1
	elseif (q + 1) * b <= a then
		q = q + 1
	end
	return q
end

-- LongMath.ceilDiv
local function ceil_div(a, b)
	return -floor_div(-a, b)
end

-- Whole numbers as plain digits: Redis' own number-to-string conversion for
-- redis.call arguments has changed between versions, this one cannot.
local function int(x)
	return string.format('%.0f', x)
end

local key = KEYS[1]
local capacity = tonumber(ARGV[1])
local units_per_micro = tonumber(ARGV[2])
local per_token = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local now
if ARGV[5] ~= nil and ARGV[5] ~= '' then
	now = tonumber(ARGV[5])
else
	-- Redis before 5 refuses writes after TIME unless effects are replicated.
	if redis.replicate_commands then
		redis.replicate_commands()
	end
	local time = redis.call('TIME')
	now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end

local full = capacity * per_token
local state = redis.call('HMGET', key, 't', 'ts')
local tokens = tonumber(state[1])
local last = tonumber(state[2])
if tokens == nil or last == nil then
	tokens = full
	last = now
end

if now > last then
	local elapsed = now - last
	-- Compare times rather than multiply first, so elapsed * rate stays small.
	if elapsed >= ceil_div(full - tokens, units_per_micro) then
		tokens = full
	else
		tokens = tokens + elapsed * units_per_micro
	end
	last = now
end
local needed = cost * per_token
local allowed = tokens >= needed
local retry_after = 0
if allowed then
	tokens = tokens - needed
else
	retry_after = ceil_div(needed - tokens, units_per_micro)
end
local reset_after = ceil_div(full - tokens, units_per_micro)

if reset_after == 0 then
	-- A full bucket is the same as no bucket: keep no state for it.
	redis.call('DEL', key)
else
	redis.call('HSET', key, 't', int(tokens), 'ts', int(last))
	-- Rounded up, the key vanishes exactly when it would be full again.
	redis.call('PEXPIRE', key, int(ceil_div(reset_after, 1000)))
end

return { allowed and 1 or 0, floor_div(tokens, per_token), retry_after, reset_after }

-- Decides one token bucket alone, taking the cost when it allows: by far the
-- commonest call (RedisRateLimitBackend sends every such decision this way;
-- only a look without taking, after another cluster slot denied, still goes
-- to decide.lua), and the one the server's time per decision is measured on.
-- The decision is decide.lua's for that policy, made by the same code
-- (decideTokens in token_bucket.lua), with locals only: no table for the
-- policy or the state, and two arguments (four at most) rather than eight.
--
-- KEYS[1]  the bucket, as token_bucket.lua keeps it
-- ARGV[1]  the policy, 'capacity n P maxWait': a refill of n tokens per P µs
--          (reduced) and the µs a caller over the limit may wait for its turn,
--          as decide.lua takes them (bucketPolicy in lib.lua)
-- ARGV[2]  the cost, 0 <= cost <= capacity, checked by the caller
-- ARGV[3]  the current time in µs; absent or '' to read the server's TIME
-- ARGV[4]  '1' for the receipt of what is taken; absent for none
--
-- Returns what decide.lua returns for one policy: allowed (1 or 0), remaining,
-- reset after (µs), retry after (µs), delay (µs), receipt ('' when nothing
-- was taken, or none was asked for). Most callers never give back what they
-- took (RateLimitBackend#tryConsumeAll): they are sent without ARGV[4], and
-- their decisions cost no receipt (about 3% of a decision's instructions).

local key = KEYS[1]
local capacity, perMicro, perToken, maxWaitMicros = bucketPolicy(ARGV[1])
-- The usual cost 1 compares as a string (interned: one pointer comparison) rather than parse.
local cost = ARGV[2]
cost = (cost == '1') and 1 or tonumber(cost)
local nowMicros = currentTimeMicros(ARGV[3])
local scaledTokens, lastMicros = loadPair(key, 't', 'ts')
if scaledTokens == nil or lastMicros == nil then
	scaledTokens, lastMicros = capacity * perToken, nowMicros
end
local allowed, remaining, resetAfter, retryAfter, delay
allowed, remaining, resetAfter, retryAfter, delay, scaledTokens, lastMicros = decideTokens(scaledTokens, lastMicros,
	capacity, perMicro, perToken, maxWaitMicros, cost, nowMicros, true)
if not allowed then
	return { 0, remaining, resetAfter, retryAfter, delay, '' }
end
if resetAfter == 0 then
	-- A full bucket is the same as no bucket: keep no state for it.
	deleteState(key)
else
	storePair(key, scaledTokens, lastMicros, resetAfter)
end
if ARGV[4] ~= '1' then
	return { 1, remaining, resetAfter, retryAfter, delay, '' }
end
return { 1, remaining, resetAfter, retryAfter, delay,
	tokenReceipt(scaledTokens, lastMicros, capacity * perToken, cost * perToken, perMicro) }

-- Helpers shared by every algorithm. dev.ratelimit.redis.LuaScripts composes
-- this file, the algorithm files and the drivers (decide.lua, refund.lua,
-- budget.lua, semaphore.lua, ...) two ways, so everything here is a local of
-- the composed text:
--   a script for EVALSHA: this file, the algorithms and one driver, all run
--     on every call (KEYS and ARGV are globals);
--   a function library for FCALL: this file, the algorithms and every driver
--     as a function of (KEYS, ARGV), run once when the library loads; a call
--     runs its driver only. A function sees no KEYS or ARGV global, so the
--     helpers take what they read as arguments, and nothing here may change
--     between calls in a way a decision could see: the library's locals
--     outlive every call (policyNumber and bucketPolicy keep parsed policy
--     arguments, nothing else).
--     The top level runs at FUNCTION LOAD, where Redis 7.0 offers no math
--     table: it only defines.
--
-- Lua numbers are doubles. Policies keep every value below 2^51 (times near
-- 2^50.7 µs, scaled capacities below 2^50), so +, - and * on them are exact;
-- only division needs care, see floorDiv.

-- Java's Math.floorDiv, exact while |a| + |b| stays below 2^53, as every
-- caller's values do (each is below 2^52). Lua's a % b is a - floor(a / b) * b,
-- and the double quotient a / b cannot round across an integer below that
-- bound: a non-integral a / b is at least 1 / b away from any integer n, more
-- than half the spacing of doubles near n. So the remainder, and then the
-- division of a - r by b, are exact. Operators rather than math.floor: no
-- table look-up and no call into C on the dearest path of every decision.
local function floorDiv(a, b)
	return (a - a % b) / b
end

-- LongMath.ceilDiv: -floorDiv(-a, b), in one step.
local function ceilDiv(a, b)
	return (a + (-a) % b) / b
end

-- LongMath.lessLostSince: the scaled units a bucket can still give back, all of
-- them up to the deadline, then perMicro fewer for each µs past it, never below 0.
local function lessLostSince(units, deadline, nowMicros, perMicro)
	if nowMicros <= deadline then
		return units
	end
	local late = nowMicros - deadline
	if late >= ceilDiv(units, perMicro) then
		return 0
	end
	return units - late * perMicro
end

-- Java's % on a non-negative dividend and a positive divisor.
local function floorMod(a, b)
	return a - floorDiv(a, b) * b
end

-- Whole numbers as plain digits, for keys, fields and arguments: Redis' own
-- number-to-string conversion for redis.call arguments has changed between
-- versions, this one cannot. Every caller passes a whole number below 2^53,
-- so '%d' (Lua 5.1 prints it as a C long, 64 bits on every platform Redis
-- runs on) is exact, and costs the server half of what '%.0f' does: number
-- formatting is among the dearest steps of a decision. -0 prints as 0.
local function int(x)
	return string.format('%d', x)
end

-- A batch of coalesced decisions (batch.lua) keeps the string states its
-- calls read and write here while it runs, so that several decisions on one
-- key read it once (one GET) and write it once (one SET ... PX, or DEL) at
-- the end, however many there are; each decision still sees what the ones
-- before it left, as if each had been its own call. Outside a batch it is
-- nil, and every read and write goes straight to Redis. Per key: { the
-- string, false for no key, or nil while a pair of numbers (3 and 4) stands
-- for it; nil when unchanged, the TTL in ms to SET it with, or true to DEL
-- it; and, for a bucket's state, its two numbers }: a bucket decided again
-- in the batch neither matches the string again nor formats one for each
-- decision.
local batchStates = nil
-- The keys a batch changed, in the order first changed: what flushStates writes.
local batchChanged = nil

-- The server's time for the whole of a batch of coalesced decisions, once one
-- of its decisions read it; nil outside a batch (see beginStates).
local batchNow = nil

-- The clock: the time passed by the caller (tests replaying a timeline), else
-- the server's TIME, the one clock every application instance agrees on.
local function currentTimeMicros(explicit)
	if explicit ~= nil and explicit ~= '' then
		return tonumber(explicit)
	end
	-- A batch reads the clock once (see beginStates): its decisions queued
	-- together, and an earlier time never refills more than a later one would.
	if batchNow ~= nil then
		return batchNow
	end
	-- Redis before 5 refuses writes after TIME unless effects are replicated;
	-- from 7 on (which sets REDIS_VERSION) that is all there is, skip the call.
	if redis.REDIS_VERSION == nil and redis.replicate_commands then
		redis.replicate_commands()
	end
	local time = redis.call('TIME')
	-- Arithmetic converts the two strings itself, each with one strtod; tonumber
	-- makes two of each (Lua 5.1 checks, then converts), and is a call on top.
	local now = time[1] * 1000000 + time[2]
	if batchStates ~= nil then
		batchNow = now
	end
	return now
end

-- Every store ends here: a key is kept exactly until forgetting it changes
-- nothing, which is when its quota is fully restored. Rounded up to whole
-- milliseconds, it never vanishes early.
local function expireAfter(key, resetAfterMicros)
	redis.call('PEXPIRE', key, int(ceilDiv(resetAfterMicros, 1000)))
end

-- A state of whole numbers kept as one string, 'a b ...', so that a decision
-- is one GET and one SET ... PX: a hash took HMGET, HSET and PEXPIRE, and
-- every redis.call is among the dearest steps of a script. A hash is the
-- state as versions before the string wrote it: read with HMGET, not
-- forgotten, and replaced by the string on the next store, so that an
-- upgrade never hands out quota again.

-- Begins a batch: from here reads and writes of string states are kept.
local function beginStates()
	batchStates = {}
	batchChanged = {}
	batchNow = nil
end

-- Writes what a batch changed, one command per key, and ends the batch.
local function flushStates()
	local states, changed = batchStates, batchChanged
	batchStates, batchChanged, batchNow = nil, nil, nil
	for i = 1, #changed do
		local key = changed[i]
		local kept = states[key]
		local ttl = kept[2]
		if ttl == true then
			redis.call('DEL', key)
		else
			local text = kept[1]
			if text == nil then
				text = string.format('%d %d', kept[3], kept[4])
			end
			redis.call('SET', key, text, 'PX', (type(ttl) == 'number') and string.format('%d', ttl) or ttl)
		end
	end
end

-- GET of a string state, as redis.pcall answers it: the string, false for no
-- key, or the error (WRONGTYPE for a legacy hash, which is not kept).
local function getState(key)
	local states = batchStates
	if states == nil then
		return redis.pcall('GET', key)
	end
	local kept = states[key]
	if kept ~= nil then
		local text = kept[1]
		if text == nil then
			return string.format('%d %d', kept[3], kept[4])
		end
		return text
	end
	local stored = redis.pcall('GET', key)
	if stored == false or type(stored) == 'string' then
		states[key] = { stored, nil }
	end
	return stored
end

-- What a batch keeps of a key it changes, made when missing; the key is
-- listed for flushStates the first time it changes.
local function changing(states, key)
	local kept = states[key]
	if kept == nil then
		kept = {}
		states[key] = kept
	elseif kept[2] ~= nil then
		return kept
	end
	batchChanged[#batchChanged + 1] = key
	return kept
end

-- Keeps a bucket's two numbers for the end of the batch, with its TTL in ms.
local function keepPair(states, key, a, b, ttlMillis)
	local kept = changing(states, key)
	kept[1], kept[2], kept[3], kept[4] = nil, ttlMillis, a, b
end

-- SET key text PX ttlMillis, or kept for the end of the batch.
local function setState(key, text, ttlMillis)
	local states = batchStates
	if states == nil then
		redis.call('SET', key, text, 'PX', ttlMillis)
		return
	end
	local kept = changing(states, key)
	kept[1], kept[2], kept[3], kept[4] = text, ttlMillis, nil, nil
end

-- DEL key of a string state (a full bucket, an ended window), or kept for the
-- end of the batch.
local function deleteState(key)
	local states = batchStates
	if states == nil then
		redis.call('DEL', key)
		return
	end
	local kept = changing(states, key)
	kept[1], kept[2], kept[3], kept[4] = false, true, nil, nil
end

-- What GET answered for a key that holds no string: false for a missing key
-- (Redis' nil), true for a hash (WRONGTYPE, a state written by an earlier
-- version); any other error is raised.
local function noString(reply)
	if not reply then
		return false
	end
	if not string.find(reply.err or '', 'WRONGTYPE', 1, true) then
		return error(reply.err)
	end
	return true
end

-- A stored string that is not the numbers its algorithm writes: never a fresh
-- state, which would hand out the whole quota again.
local function stateError(key, stored)
	return error('rate limit state of ' .. key .. ' is not the numbers its algorithm writes: ' .. stored)
end

-- The two whole numbers of a bucket's state; nil, nil for a missing key. A
-- hash is read from its fields legacyA and legacyB. Written out rather than
-- through loadString: the bucket decision is the commonest, and every Lua
-- call on its way costs it.
local function loadPair(key, legacyA, legacyB)
	local states = batchStates
	if states ~= nil then
		local kept = states[key]
		if kept ~= nil and kept[3] ~= nil then
			return kept[3], kept[4]
		end
	end
	local stored = getState(key)
	if type(stored) == 'string' then
		-- One match for both numbers, as storePair writes them (and every build
		-- since the string did), rather than a find, two subs and two tonumbers:
		-- five calls into C, and tonumber converts twice. Matched, both are
		-- whole decimal numbers, so + 0 converts each exactly, with one strtod.
		local a, b = string.match(stored, '^(-?%d+) (-?%d+)$')
		if a then
			a, b = a + 0, b + 0
			if states ~= nil then
				local kept = states[key]
				kept[3], kept[4] = a, b
			end
			return a, b
		end
		return stateError(key, stored)
	end
	if not noString(stored) then
		return nil, nil
	end
	local legacy = redis.call('HMGET', key, legacyA, legacyB)
	return tonumber(legacy[1]), tonumber(legacy[2])
end

-- The stored string of a state of more numbers, matched by its algorithm;
-- false for a missing key, true for a hash (noString).
local function loadString(key)
	local stored = getState(key)
	if type(stored) == 'string' then
		return stored
	end
	return noString(stored)
end

-- Stores a state read by loadPair, kept as expireAfter keeps a key; SET
-- replaces a legacy hash whole. Every bucket decision that takes ends here:
-- int(ceilDiv(resetAfterMicros, 1000)) is written out, two Lua calls fewer.
local function storePair(key, a, b, resetAfterMicros)
	local ttlMillis = (resetAfterMicros + (-resetAfterMicros) % 1000) / 1000
	local states = batchStates
	if states ~= nil then
		keepPair(states, key, a, b, ttlMillis)
		return
	end
	redis.call('SET', key, string.format('%d %d', a, b), 'PX', string.format('%d', ttlMillis))
end

-- Stores a state read by loadString, its numbers formatted as text, as
-- storePair does.
local function storeString(key, text, resetAfterMicros)
	setState(key, text, string.format('%d', (resetAfterMicros + (-resetAfterMicros) % 1000) / 1000))
end

-- Algorithm code (as sent by RedisRateLimitBackend) to implementation; each
-- algorithm file registers itself. An implementation has
--   rateBased                            configured with a refill rather than a window
--   load(key, policy, nowMicros)         the state, or a fresh one when the key is missing
--   decide(self, policy, cost, nowMicros, commit)  the mirror of LimitState#decide
--   store(self, policy, resetAfterMicros) writes a committed state and its TTL; returns the receipt
--   refund(self, policy, cost, receipt, nowMicros) gives back what a decision with that receipt took
-- decide returns dev.ratelimit.core.Decision as five values rather than a
-- table: allowed (a boolean), remaining, reset after, retry after and delay
-- (µs). Tables are the dearest thing a script can allocate, and a decision
-- makes up to two decisions per policy. For the same reason each algorithm's
-- table is built with a slot for every method: the whole script text runs on
-- every call, and a table grown field by field is rehashed on the way.
local ALGORITHMS = {}

-- A policy's number from its argument text: tonumber is a strtod, among the
-- dearest steps of a decision, and a policy's arguments are the same text call
-- after call. The function library (see the top) keeps the parsed numbers
-- between calls, at most 256 texts (then forgotten all at once); a number is
-- only ever its text's, so keeping it changes no decision. LuaScripts sets
-- KEEP_PARSED in the library only: an EVALSHA script runs afresh on every call,
-- where keeping would only cost.
local KEEP_PARSED = false
local PARSED, parsed = {}, 0
local function keepParsed(text, value)
	if parsed >= 256 then
		PARSED, parsed = {}, 0
	end
	PARSED[text] = value
	parsed = parsed + 1
end

local function policyNumber(text)
	if not KEEP_PARSED then
		return tonumber(text)
	end
	local number = PARSED[text]
	if number == nil then
		number = tonumber(text)
		keepParsed(text, number)
	end
	return number
end

-- A bucket's policy from its one argument text, 'capacity a b maxWait' (see
-- decide_token_bucket.lua): the four numbers in one argument rather than four,
-- as every argument costs the server (Redis makes each a Lua string of the
-- call's ARGV table, which grows as they come). Kept in the library as
-- policyNumber keeps numbers (and in the same 256), a table of four per text;
-- matched, each is a whole number, converted exactly by + 0 (one strtod).
local function bucketPolicy(text)
	local policy = PARSED[text]
	if policy ~= nil then
		return policy[1], policy[2], policy[3], policy[4]
	end
	local capacity, a, b, maxWait = string.match(text, '^(%d+) (%d+) (%d+) (%d+)$')
	if not capacity then
		return error('rate limit policy is not four whole numbers: ' .. tostring(text))
	end
	capacity, a, b, maxWait = capacity + 0, a + 0, b + 0, maxWait + 0
	if KEEP_PARSED then
		keepParsed(text, { capacity, a, b, maxWait })
	end
	return capacity, a, b, maxWait
end

-- The policy whose six arguments start at args[at] (the script's ARGV, passed
-- in: a function of the library sees no ARGV global): algorithm code, capacity,
-- then a refill of a tokens per b µs (buckets) or a window of a µs (windows,
-- b unused), cost, max wait. Returns the policy and the cost. Arguments an
-- algorithm does not use are not parsed: every tonumber is a strtod.
local function readPolicy(args, at)
	local code = args[at]
	local algorithm = ALGORITHMS[code]
	if not algorithm then
		return error('unknown rate limit algorithm: ' .. tostring(code))
	end
	-- The usual cost 1 and max wait 0 compare as strings (interned: one pointer
	-- comparison) rather than parse.
	local cost = args[at + 4]
	cost = (cost == '1') and 1 or tonumber(cost)
	if algorithm.rateBased then
		local maxWait = args[at + 5]
		return { algorithm = algorithm, capacity = policyNumber(args[at + 1]), tokens = policyNumber(args[at + 2]),
			periodMicros = policyNumber(args[at + 3]), maxWaitMicros = (maxWait == '0') and 0 or tonumber(maxWait) or 0 },
			cost
	end
	return { algorithm = algorithm, capacity = policyNumber(args[at + 1]), windowMicros = policyNumber(args[at + 2]),
		maxWaitMicros = 0 }, cost
end

-- Cost budgets: a line-by-line mirror of dev.ratelimit.budget.BudgetState for
-- one budget key, the Redis side of RedisBudgetStore. LuaScripts composes it
-- after lib.lua (floorDiv, ceilDiv, int, currentTimeMicros, expireAfter).
--
-- KEYS[1]  the state, a hash
--            r          reserved: the total of the live leases
--            s<i>       spent in limit i's current window
--            w<i> e<i>  limit i's window start and end; absent while a
--                       rolling window has not started (Java's NONE)
--            a:<id>     the amount of live lease <id>
-- KEYS[2]  the live leases, a sorted set: member the reservation id, score
--          its lease expiry in µs (Java's map in insertion order is the
--          set's score order: every lease lasts the policy's reservation timeout)
-- KEYS[3]  the done markers of settled or released ids, a sorted set scored
--          by the marker's expiry in µs
--          The caller passes all three, sharing one hash tag, so that they
--          live in one Redis Cluster slot. Missing keys are a fresh state.
-- ARGV[1]  the operation: reserve, extend, settle, release or peek
-- ARGV[2]  the current time in µs, or '' to read the server's TIME
-- ARGV[3]  the reservation id ('' for peek)
-- ARGV[4]  the estimate (reserve), the addition (extend) or the actual cost
--          (settle); 0 otherwise
-- ARGV[5]  the policy's reservation timeout in µs: how long a lease lives
-- ARGV[6..] five values per limit, in the policy's order:
--            kind       'c' calendar or 'r' rolling
--            amount     the limit's amount in micro-units
--            a, b, c    calendar: start, end and next end of the window
--                       around the caller's clock (BudgetWindow.Span), of
--                       which the script picks the one containing now;
--                       rolling: the window's length, 0, 0
--
-- Returns allowed (1 or 0), reserved, retry after, then four values per
-- limit: spent, remaining, reset after, violated (1 or 0): BudgetDecision.
--
-- TTL      every key until the state can be forgotten (forgettableAt below),
--          measured from now; a state that is as good as fresh is deleted.
--          With an explicit time, leases and markers expire by comparing
--          their scores to it, never by Redis' own clock.
--
-- Every value is an integer below 2^53 (amounts at most 2^50, times near
-- 2^50.7 µs), so the doubles of Lua and of sorted set scores hold them exactly.

local KEY_STATE = KEYS[1]
local KEY_LEASES = KEYS[2]
local KEY_DONE = KEYS[3]

local operation = ARGV[1]
-- Checked before anything is written: a script that fails half-way keeps its writes.
if operation ~= 'reserve' and operation ~= 'extend' and operation ~= 'settle' and operation ~= 'release'
		and operation ~= 'peek' then
	return error('unknown budget operation: ' .. tostring(operation))
end
local now = currentTimeMicros(ARGV[2])
local id = ARGV[3]
local amountArg = tonumber(ARGV[4])
local leaseMicros = tonumber(ARGV[5])

local limits = {}
for at = 6, #ARGV, 5 do
	local limit = { rolling = ARGV[at] == 'r', amount = tonumber(ARGV[at + 1]) }
	if limit.rolling then
		limit.rollingMicros = tonumber(ARGV[at + 2])
	else
		limit.spanStart = tonumber(ARGV[at + 2])
		limit.spanEnd = tonumber(ARGV[at + 3])
		limit.spanNextEnd = tonumber(ARGV[at + 4])
	end
	limits[#limits + 1] = limit
end

-- The hash's scalar fields; a window start or end of nil is Java's NONE.
local function load()
	local fields = { 'r' }
	for i = 1, #limits do
		fields[#fields + 1] = 's' .. i
		fields[#fields + 1] = 'w' .. i
		fields[#fields + 1] = 'e' .. i
	end
	local values = redis.call('HMGET', KEY_STATE, unpack(fields))
	local state = { reserved = tonumber(values[1]) or 0, spent = {}, windowStart = {}, windowEnd = {} }
	for i = 1, #limits do
		state.spent[i] = tonumber(values[3 * i - 1]) or 0
		state.windowStart[i] = tonumber(values[3 * i])
		state.windowEnd[i] = tonumber(values[3 * i + 1])
	end
	return state
end

local function isLive(member)
	return redis.call('ZSCORE', KEY_LEASES, member) ~= false
end

local function isDone(member)
	return redis.call('ZSCORE', KEY_DONE, member) ~= false
end

-- leases.remove(id): the lease's amount, or nil when it is not live.
local function removeLease(state, member)
	if not isLive(member) then
		return nil
	end
	local amount = tonumber(redis.call('HGET', KEY_STATE, 'a:' .. member)) or 0
	redis.call('ZREM', KEY_LEASES, member)
	redis.call('HDEL', KEY_STATE, 'a:' .. member)
	return amount
end

-- BudgetState#normalize
local function normalize(state)
	local expired = redis.call('ZRANGEBYSCORE', KEY_LEASES, '-inf', int(now))
	for _, member in ipairs(expired) do
		state.reserved = state.reserved - (tonumber(redis.call('HGET', KEY_STATE, 'a:' .. member)) or 0)
		redis.call('HDEL', KEY_STATE, 'a:' .. member)
	end
	if #expired > 0 then
		redis.call('ZREMRANGEBYSCORE', KEY_LEASES, '-inf', int(now))
	end
	redis.call('ZREMRANGEBYSCORE', KEY_DONE, '-inf', int(now))
	for i, limit in ipairs(limits) do
		if limit.rolling then
			if state.windowStart[i] ~= nil and now >= state.windowEnd[i] then
				state.windowStart[i] = nil
				state.windowEnd[i] = nil
				state.spent[i] = 0
			end
		else
			local start = (now >= limit.spanEnd) and limit.spanEnd or limit.spanStart
			local finish = (now >= limit.spanEnd) and limit.spanNextEnd or limit.spanEnd
			-- Only forward: a clock that steps back over midnight must not wipe the new day's spend.
			if state.windowStart[i] == nil or start > state.windowStart[i] then
				state.windowStart[i] = start
				state.windowEnd[i] = finish
				state.spent[i] = 0
			end
		end
	end
end

-- BudgetState#startRollingWindows
local function startRollingWindows(state)
	for i, limit in ipairs(limits) do
		if limit.rolling and state.windowStart[i] == nil then
			state.windowStart[i] = now
			state.windowEnd[i] = now + limit.rollingMicros
		end
	end
end

-- BudgetState#retryAfter; the oldest live lease is the lowest score.
local function retryAfter(state, i, amount, estimate)
	local untilWindowEnds = (state.windowStart[i] ~= nil) and (state.windowEnd[i] - now) or 0
	local oldest = redis.call('ZRANGE', KEY_LEASES, 0, 0, 'WITHSCORES')
	if state.spent[i] + estimate > amount or #oldest == 0 then
		return math.max(untilWindowEnds, 1)
	end
	local untilLeaseEnds = tonumber(oldest[2]) - now
	if untilWindowEnds > 0 then
		return math.max(1, math.min(untilWindowEnds, untilLeaseEnds))
	end
	return math.max(1, untilLeaseEnds)
end

-- BudgetState#decision, as reply values.
local function decision(state, allowed, violated, retry)
	local reply = { allowed and 1 or 0, state.reserved, retry }
	for i, limit in ipairs(limits) do
		reply[#reply + 1] = state.spent[i]
		reply[#reply + 1] = math.max(0, limit.amount - state.spent[i] - state.reserved)
		reply[#reply + 1] = (state.windowStart[i] ~= nil) and math.max(0, state.windowEnd[i] - now) or 0
		reply[#reply + 1] = (violated ~= nil and violated[i]) and 1 or 0
	end
	return reply
end

-- BudgetState#forgettableAt, or nil for NONE. A rolling window that has
-- started counts even with nothing spent: it fixes where later charges fall
-- and the reset time every decision reports, so forgetting it earlier would
-- change decisions.
local function forgettableAt(state)
	local at = nil
	for i, limit in ipairs(limits) do
		if state.windowEnd[i] ~= nil and (state.spent[i] > 0 or limit.rolling) then
			at = math.max(at or state.windowEnd[i], state.windowEnd[i])
		end
	end
	for _, key in ipairs({ KEY_LEASES, KEY_DONE }) do
		local latest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
		if #latest > 0 then
			at = math.max(at or tonumber(latest[2]), tonumber(latest[2]))
		end
	end
	return at
end

-- Writes the state, with every key kept until it can be forgotten.
local function store(state)
	local forgettable = forgettableAt(state)
	if forgettable == nil or forgettable <= now then
		redis.call('DEL', KEY_STATE, KEY_LEASES, KEY_DONE)
		return
	end
	local fields = { 'r', int(state.reserved) }
	local absent = {}
	for i = 1, #limits do
		fields[#fields + 1] = 's' .. i
		fields[#fields + 1] = int(state.spent[i])
		if state.windowStart[i] ~= nil then
			fields[#fields + 1] = 'w' .. i
			fields[#fields + 1] = int(state.windowStart[i])
			fields[#fields + 1] = 'e' .. i
			fields[#fields + 1] = int(state.windowEnd[i])
		else
			absent[#absent + 1] = 'w' .. i
			absent[#absent + 1] = 'e' .. i
		end
	end
	redis.call('HSET', KEY_STATE, unpack(fields))
	if #absent > 0 then
		redis.call('HDEL', KEY_STATE, unpack(absent))
	end
	for _, key in ipairs({ KEY_STATE, KEY_LEASES, KEY_DONE }) do
		expireAfter(key, forgettable - now)
	end
end

-- BudgetState#reserve
local function reserve(state, estimate)
	if isLive(id) or isDone(id) then
		return decision(state, true, nil, 0)
	end
	local violated = {}
	local allowed = true
	local retry = 0
	for i, limit in ipairs(limits) do
		violated[i] = false
		if state.spent[i] + state.reserved + estimate > limit.amount then
			violated[i] = true
			allowed = false
			retry = math.max(retry, retryAfter(state, i, limit.amount, estimate))
		end
	end
	if not allowed then
		return decision(state, false, violated, retry)
	end
	startRollingWindows(state)
	state.reserved = state.reserved + estimate
	redis.call('ZADD', KEY_LEASES, int(now + leaseMicros), id)
	redis.call('HSET', KEY_STATE, 'a:' .. id, int(estimate))
	return decision(state, true, violated, 0)
end

-- BudgetState#extend: a live lease grows if every limit has room, and is renewed.
local function extend(state, more)
	local violated = {}
	for i = 1, #limits do
		violated[i] = false
	end
	if not isLive(id) then
		return decision(state, false, violated, 0)
	end
	local allowed = true
	for i, limit in ipairs(limits) do
		if state.spent[i] + state.reserved + more > limit.amount then
			violated[i] = true
			allowed = false
		end
	end
	if not allowed then
		return decision(state, false, violated, 0)
	end
	state.reserved = state.reserved + more
	redis.call('ZADD', KEY_LEASES, int(now + leaseMicros), id)
	redis.call('HINCRBY', KEY_STATE, 'a:' .. id, int(more))
	return decision(state, true, violated, 0)
end

-- BudgetState#settle
local function settle(state, actual)
	if isDone(id) then
		return decision(state, true, nil, 0)
	end
	local amount = removeLease(state, id)
	if amount ~= nil then
		state.reserved = state.reserved - amount
	end
	startRollingWindows(state)
	for i = 1, #limits do
		state.spent[i] = state.spent[i] + actual
	end
	redis.call('ZADD', KEY_DONE, int(now + leaseMicros), id)
	return decision(state, true, nil, 0)
end

-- BudgetState#release
local function release(state)
	if not isDone(id) then
		local amount = removeLease(state, id)
		if amount ~= nil then
			state.reserved = state.reserved - amount
		end
		redis.call('ZADD', KEY_DONE, int(now + leaseMicros), id)
	end
	return decision(state, true, nil, 0)
end

local state = load()
normalize(state)
local reply
if operation == 'reserve' then
	reply = reserve(state, amountArg)
elseif operation == 'extend' then
	reply = extend(state, amountArg)
elseif operation == 'settle' then
	reply = settle(state, amountArg)
elseif operation == 'release' then
	reply = release(state)
else
	reply = decision(state, true, nil, 0)
end
store(state)
return reply

-- Applies several calls of the decision drivers (decide.lua,
-- decide_token_bucket.lua, refund.lua, budget.lua, semaphore.lua) in one run,
-- one after another in the order given, each exactly as its own call would:
-- the Redis side of coalesced decisions. LuaScripts composes it after the
-- drivers, each a local function of (KEYS, ARGV) listed in BATCHED.
--
-- KEYS      the keys of every call, call after call
-- ARGV      per call: the driver's name, its number of keys, its number of
--           arguments, then its arguments
--
-- Returns one reply per call, in order: { 1, the driver's reply } or, for a
-- call whose driver failed, { 0, the error's text }. One call's failure is its
-- own, as it would be alone (what it wrote before it failed stays written, as
-- alone); the calls after it are applied all the same.
--
-- The layout is checked whole before any call is applied, so that a batch the
-- caller built wrongly writes nothing.

local calls = {}
local at = 1
local keyAt = 1
local argCount = #ARGV
while at <= argCount do
	local driver = BATCHED[ARGV[at]]
	local keys = tonumber(ARGV[at + 1])
	local args = tonumber(ARGV[at + 2])
	if driver == nil or keys == nil or args == nil or keys < 0 or args < 0
			or keyAt + keys - 1 > #KEYS or at + 2 + args > argCount then
		return error('a batch of limiter calls is malformed at argument ' .. at)
	end
	calls[#calls + 1] = { driver, keyAt, keys, at + 3, args }
	keyAt = keyAt + keys
	at = at + 3 + args
end
if keyAt - 1 ~= #KEYS then
	return error('a batch of limiter calls names ' .. #KEYS .. ' keys but its calls use ' .. (keyAt - 1))
end

local replies = {}
-- Several calls on one key read it once and write it once (see beginStates).
beginStates()
-- Each call's keys and arguments, in two tables the calls share (no driver
-- keeps them past its call): filled afresh from `from`, the rest of the last
-- call's (`before` entries) cleared. Returns how many it holds now.
local function refill(into, before, from, first, count)
	for k = 1, count do
		into[k] = from[first + k]
	end
	for k = count + 1, before do
		into[k] = nil
	end
	return count
end
local callKeys, keysBefore = {}, 0
local callArgs, argsBefore = {}, 0
for i = 1, #calls do
	local call = calls[i]
	keysBefore = refill(callKeys, keysBefore, KEYS, call[2] - 1, call[3])
	argsBefore = refill(callArgs, argsBefore, ARGV, call[4] - 1, call[5])
	local ok, reply = pcall(call[1], callKeys, callArgs)
	if ok then
		replies[i] = { 1, reply }
	else
		-- A failed redis.call raises a table with the error's text in err.
		replies[i] = { 0, (type(reply) == 'table' and reply.err) or tostring(reply) }
	end
end
flushStates()
return replies

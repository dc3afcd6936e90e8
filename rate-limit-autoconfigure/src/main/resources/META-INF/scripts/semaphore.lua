-- A lease semaphore for one key of a distributed concurrency cap, the Redis
-- side of RedisPermitStore. LuaScripts composes it after lib.lua (int,
-- ceilDiv, currentTimeMicros).
--
-- KEYS[1]  the holders, a sorted set: member a permit id, score the expiry of
--          its lease in µs. A holder whose score is at or before now is gone:
--          its instance died or stopped renewing, and its permit is free again.
-- ARGV[1]  the operation:
--            acquire  take a permit if fewer than ARGV[4] holders are live
--            renew    extend a permit that is still held by ARGV[5] from now
--            release  give a permit back (releasing twice is harmless)
--            holders  count the live holders, writing nothing
-- ARGV[2]  the current time in µs, or '' to read the server's TIME
-- ARGV[3]  the permit id ('' for holders)
-- ARGV[4]  the number of permits (acquire; 0 otherwise)
-- ARGV[5]  the lease in µs, the cap's permit-ttl (acquire and renew; 0 otherwise)
--
-- Returns three integers:
--   flag      acquire: 1 granted, 0 refused; renew: 1 still held, 0 lost;
--             release: 1 was held, 0 was not; holders: 0
--   holders   live holders after the operation
--   wait      refused acquire and holders: µs until the earliest live lease
--             expires, when a permit frees even if nobody releases one; 0
--             otherwise, and when nobody holds a permit
--
-- TTL      the key lives until its latest lease expires, measured from now,
--          so a semaphore whose every holder died leaves nothing behind. An
--          empty sorted set does not exist in Redis: removing the last holder
--          deletes the key. With an explicit time, leases expire by comparing
--          their scores to it, never by Redis' own clock.
--
-- Times are integers below 2^53 (near 2^50.7 µs), exact as doubles and as
-- sorted set scores.

local KEY = KEYS[1]

local operation = ARGV[1]
-- Checked before anything is written: a script that fails half-way keeps its writes.
if operation ~= 'acquire' and operation ~= 'renew' and operation ~= 'release' and operation ~= 'holders' then
	return error('unknown semaphore operation: ' .. tostring(operation))
end
local id = ARGV[3]
local permits = tonumber(ARGV[4])
local leaseMicros = tonumber(ARGV[5])
if operation ~= 'holders' and (id == nil or id == '') then
	return error('semaphore ' .. operation .. ' needs a permit id')
end
if operation == 'acquire' and (permits == nil or permits < 1 or permits ~= math.floor(permits)) then
	return error('permits must be a whole number of at least 1, was ' .. tostring(ARGV[4]))
end
if (operation == 'acquire' or operation == 'renew')
		and (leaseMicros == nil or leaseMicros < 1 or leaseMicros ~= math.floor(leaseMicros)) then
	return error('lease must be a whole number of at least 1 microsecond, was ' .. tostring(ARGV[5]))
end
local now = currentTimeMicros(ARGV[2])

-- The key outlives no lease: its TTL is the latest expiry. Removing the last
-- member already deleted the key, and PEXPIRE of a missing key does nothing.
local function expireAtLatestLease()
	local latest = redis.call('ZRANGE', KEY, -1, -1, 'WITHSCORES')
	if #latest > 0 then
		redis.call('PEXPIRE', KEY, int(ceilDiv(tonumber(latest[2]) - now, 1000)))
	end
end

if operation == 'holders' then
	-- A read: expired holders are skipped, left for the next write to drop.
	local live = redis.call('ZCOUNT', KEY, '(' .. int(now), '+inf')
	local wait = 0
	if live > 0 then
		local earliest = redis.call('ZRANGEBYSCORE', KEY, '(' .. int(now), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
		wait = tonumber(earliest[2]) - now
	end
	return { 0, live, wait }
end

-- Holders whose lease ended are gone before anything is counted or extended.
redis.call('ZREMRANGEBYSCORE', KEY, '-inf', int(now))

local flag = 0
if operation == 'acquire' then
	-- A retried acquire with the same id (its first reply was lost) keeps its one permit.
	if redis.call('ZSCORE', KEY, id) ~= false or redis.call('ZCARD', KEY) < permits then
		redis.call('ZADD', KEY, int(now + leaseMicros), id)
		flag = 1
	end
elseif operation == 'renew' then
	-- XX: a permit that expired (and was dropped above) or was released is never
	-- brought back, so a late renewal cannot push the holders over the permits.
	if redis.call('ZSCORE', KEY, id) ~= false then
		redis.call('ZADD', KEY, 'XX', int(now + leaseMicros), id)
		flag = 1
	end
else
	flag = redis.call('ZREM', KEY, id)
end

expireAtLatestLease()
local holders = redis.call('ZCARD', KEY)
local wait = 0
if flag == 0 and operation == 'acquire' then
	-- Refused, so at least one live holder: the earliest lease is the first member.
	local earliest = redis.call('ZRANGE', KEY, 0, 0, 'WITHSCORES')
	wait = tonumber(earliest[2]) - now
end
return { flag, holders, wait }

-- A provider pause shared by every instance, the write side of RedisPauseStore:
-- keeps the later end of the pause in force and the new one, so that a short
-- pause never cuts a longer one short.
--
-- KEYS[1]  the pause: the end in Redis' own milliseconds (TIME), with a TTL
--          that ends with it
-- ARGV[1]  the pause in whole milliseconds, at least 1
--
-- Returns the milliseconds left of the pause in force after the call.

local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local untilMs = now + tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current >= untilMs then
	return current - now
end
redis.call('SET', KEYS[1], untilMs, 'PX', ARGV[1])
return tonumber(ARGV[1])

-- The read side of RedisPauseStore: the milliseconds left of a provider's
-- pause, by the server's clock, 0 when none is in force.
--
-- KEYS[1]  the pause, as pause.lua writes it

local stored = redis.call('GET', KEYS[1])
if not stored then
	return 0
end
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local left = tonumber(stored) - now
if left < 0 then
	return 0
end
return left

-- The floor of an exact distributed decision in Lua: GCRA (the generic cell
-- rate algorithm of redis-cell and the well-known GCRA scripts) for a cost of
-- 1, with the commands no such decision can do without: TIME (the one clock
-- every instance agrees on), GET and SET ... PX of one string. Not a limiter
-- of this project: the benchmarks' yardstick for what ours costs Redis.
--
-- KEYS[1]  the key; its value the theoretical arrival time (TAT) in µs
-- ARGV[1]  emission interval T: µs per token, a whole number
-- ARGV[2]  burst: tokens a fresh key admits at once (a bucket's capacity)
--
-- A call is admitted when its TAT, advanced by T, is at most burst * T ahead
-- of now. Returns, like a real limiter: allowed (1 or 0), remaining tokens,
-- retry after (µs, 0 when allowed), reset after (µs until the key is full
-- again, which is also how long it is kept).
local time = redis.call('TIME')
local now = time[1] * 1000000 + time[2]
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then
	tat = now
end
local newTat = tat + interval
local allowAt = newTat - interval * tonumber(ARGV[2])
if allowAt > now then
	return { 0, 0, allowAt - now, tat - now }
end
-- '%d' keeps the µs exact (a Lua number passed to redis.call is formatted
-- differently across Redis versions); the TTL in ms is small and whole.
redis.call('SET', KEYS[1], string.format('%d', newTat), 'PX', math.ceil((newTat - now) / 1000))
return { 1, math.floor((now - allowAt) / interval), 0, newTat - now }

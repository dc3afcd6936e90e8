-- Removes a run-time override, the other write side of RedisOverrideStore;
-- raises the version only when there was one to remove.
--
-- KEYS[1]  the overrides, a hash, as override_put.lua writes it
-- KEYS[2]  the version, a counter
-- ARGV[1]  the field
--
-- Returns the new version, or 0 when nothing was removed.

if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
	return redis.call('INCR', KEYS[2])
end
return 0

-- Sets a run-time override of a limit's numbers, the write side of
-- RedisOverrideStore, and raises the version every instance polls.
--
-- KEYS[1]  the overrides, a hash: field 'limit:target', value the quota text
-- KEYS[2]  the version, a counter
-- ARGV[1]  the field
-- ARGV[2]  the quota text
--
-- Returns the new version.

redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return redis.call('INCR', KEYS[2])

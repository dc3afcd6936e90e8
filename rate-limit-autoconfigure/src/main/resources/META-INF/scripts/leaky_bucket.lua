-- Leaky bucket as a meter (policing): a line-by-line mirror of
-- dev.ratelimit.core.LeakyBucket.
--
-- KEYS[i]  the bucket, a hash
--            l   scaledLevel: the level scaled by the refill period (one unit = P)
--            ts  lastMicros: time of the last drain in µs
--          A missing key is an empty bucket; an empty bucket is deleted.
-- ARGV     code 'lb', capacity, drains n units, per P µs (n/P reduced), cost, max wait µs
-- TTL      until the bucket would be empty again
-- Receipt  none: a refund takes the cost out again, never below empty.

local LeakyBucket = { rateBased = true }
ALGORITHMS['lb'] = LeakyBucket

function LeakyBucket.load(key, policy, nowMicros)
	local stored = redis.call('HMGET', key, 'l', 'ts')
	local self = { key = key, scaledLevel = tonumber(stored[1]), lastMicros = tonumber(stored[2]) }
	if self.scaledLevel == nil or self.lastMicros == nil then
		self.scaledLevel = 0
		self.lastMicros = nowMicros
	end
	return self
end

function LeakyBucket.decide(self, policy, cost, nowMicros, commit)
	local perToken = policy.periodMicros
	local unitsPerMicro = policy.tokens
	local full = policy.capacity * perToken
	if nowMicros > self.lastMicros then
		local elapsed = nowMicros - self.lastMicros
		if elapsed >= ceilDiv(self.scaledLevel, unitsPerMicro) then
			self.scaledLevel = 0
		else
			self.scaledLevel = self.scaledLevel - elapsed * unitsPerMicro
		end
		self.lastMicros = nowMicros
	end
	local poured = self.scaledLevel + cost * perToken
	if poured > full then
		local wait = ceilDiv(poured - full, unitsPerMicro)
		-- Wait mode: the bucket may overflow by what drains within max-wait.
		if wait > policy.maxWaitMicros then
			return Decision(false, math.max(0, floorDiv(full - self.scaledLevel, perToken)), policy.capacity,
				ceilDiv(self.scaledLevel, unitsPerMicro), wait - policy.maxWaitMicros)
		end
	end
	if commit then
		self.scaledLevel = poured
	end
	local delay = 0
	if poured > full then
		delay = ceilDiv(poured - full, unitsPerMicro)
	end
	return Decision(true, math.max(0, floorDiv(full - poured, perToken)), policy.capacity,
		ceilDiv(poured, unitsPerMicro), 0, delay)
end

function LeakyBucket.store(self, policy, decision)
	if decision.resetAfterMicros == 0 then
		-- An empty bucket is the same as no bucket.
		redis.call('DEL', self.key)
	else
		redis.call('HSET', self.key, 'l', int(self.scaledLevel), 'ts', int(self.lastMicros))
		expireAfter(self.key, decision.resetAfterMicros)
	end
	return ''
end

function LeakyBucket.refund(self, policy, cost, receipt, nowMicros)
	-- The level is interchangeable like tokens: whoever poured since, taking this cost out is right.
	self.scaledLevel = math.max(self.scaledLevel - cost * policy.periodMicros, 0)
end

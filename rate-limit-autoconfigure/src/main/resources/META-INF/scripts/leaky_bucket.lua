-- Leaky bucket as a meter (policing): a line-by-line mirror of
-- dev.ratelimit.core.LeakyBucket.
--
-- KEYS[i]  the bucket, a string 'scaledLevel lastMicros' (loadPair in lib.lua):
--            scaledLevel  the level scaled by the refill period (one unit = P)
--            lastMicros   time of the last drain in µs
--          (a hash of fields l and ts before; still read)
--          A missing key is an empty bucket; an empty bucket is deleted.
-- ARGV     code 'lb', capacity, drains n units, per P µs (n/P reduced), cost, max wait µs
-- TTL      until the bucket would be empty again
-- Receipt  the earliest time (µs) the bucket could have been empty without the
--          cost (LeakyBucket#receipt): a refund takes the cost out again, less
--          the drain that may have been lost since, never below empty.

-- Every method has its slot from the start (see ALGORITHMS in lib.lua).
local LeakyBucket = { rateBased = true, load = false, decide = false, store = false, refund = false }
ALGORITHMS['lb'] = LeakyBucket

function LeakyBucket.load(key, policy, nowMicros)
	local scaledLevel, lastMicros = loadPair(key, 'l', 'ts')
	if scaledLevel == nil or lastMicros == nil then
		return { key = key, scaledLevel = 0, lastMicros = nowMicros, taken = false }
	end
	return { key = key, scaledLevel = scaledLevel, lastMicros = lastMicros, taken = false }
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
			return false, math.max(0, floorDiv(full - self.scaledLevel, perToken)),
				ceilDiv(self.scaledLevel, unitsPerMicro), wait - policy.maxWaitMicros, 0
		end
	end
	if commit then
		self.scaledLevel = poured
		self.taken = cost * perToken
	end
	local delay = 0
	if poured > full then
		delay = ceilDiv(poured - full, unitsPerMicro)
	end
	return true, math.max(0, floorDiv(full - poured, perToken)), ceilDiv(poured, unitsPerMicro), 0, delay
end

function LeakyBucket.store(self, policy, resetAfterMicros)
	local receipt = ''
	if self.taken then
		-- A number, as the token bucket's receipt.
		receipt = self.lastMicros + floorDiv(self.scaledLevel - self.taken, policy.tokens)
	end
	if resetAfterMicros == 0 then
		-- An empty bucket is the same as no bucket.
		deleteState(self.key)
	else
		storePair(self.key, self.scaledLevel, self.lastMicros, resetAfterMicros)
	end
	return receipt
end

function LeakyBucket.refund(self, policy, cost, receipt, nowMicros)
	-- The level is interchangeable like tokens: whoever poured since, taking this cost out is right.
	local back = lessLostSince(cost * policy.periodMicros, tonumber(receipt), nowMicros, policy.tokens)
	self.scaledLevel = math.max(self.scaledLevel - back, 0)
end

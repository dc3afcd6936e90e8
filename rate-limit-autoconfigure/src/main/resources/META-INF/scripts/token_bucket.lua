-- Token bucket: a line-by-line mirror of dev.ratelimit.core.TokenBucket, so
-- that the in-memory and Redis backends make the same decisions.
--
-- KEYS[i]  the bucket, a string 'scaledTokens lastMicros' (loadPair in lib.lua):
--            scaledTokens  tokens scaled by the refill period (one token = P units)
--            lastMicros    time of the last refill in µs
--          (a hash of fields t and ts before; still read)
--          A missing key is a full bucket; a full bucket is deleted.
-- ARGV     code 'tb', capacity, n tokens, per P µs (n/P reduced), cost, max wait µs
--          (wait mode: the tokens may go negative by what refills within it)
-- TTL      until the bucket would be full again
-- Receipt  the earliest time (µs) the bucket could have been full without the
--          cost (TokenBucket#receipt): a refund adds the cost back, less the
--          refill that may have been lost to the capacity since, capped at full.

-- Every method has its slot from the start (see ALGORITHMS in lib.lua).
local TokenBucket = { rateBased = true, load = false, decide = false, store = false, refund = false }
ALGORITHMS['tb'] = TokenBucket

function TokenBucket.load(key, policy, nowMicros)
	local scaledTokens, lastMicros = loadPair(key, 't', 'ts')
	if scaledTokens == nil or lastMicros == nil then
		return { key = key, scaledTokens = policy.capacity * policy.periodMicros, lastMicros = nowMicros, taken = false }
	end
	return { key = key, scaledTokens = scaledTokens, lastMicros = lastMicros, taken = false }
end

function TokenBucket.decide(self, policy, cost, nowMicros, commit)
	local perToken = policy.periodMicros
	local unitsPerMicro = policy.tokens
	local full = policy.capacity * perToken
	if nowMicros > self.lastMicros then
		local elapsed = nowMicros - self.lastMicros
		-- Compare times rather than multiply first, so elapsed * rate stays small.
		if elapsed >= ceilDiv(full - self.scaledTokens, unitsPerMicro) then
			self.scaledTokens = full
		else
			self.scaledTokens = self.scaledTokens + elapsed * unitsPerMicro
		end
		self.lastMicros = nowMicros
	end
	local needed = cost * perToken
	if self.scaledTokens < needed then
		local wait = ceilDiv(needed - self.scaledTokens, unitsPerMicro)
		-- Wait mode: a caller whose turn comes within max-wait takes its tokens now.
		if wait > policy.maxWaitMicros then
			return false, math.max(0, floorDiv(self.scaledTokens, perToken)),
				ceilDiv(full - self.scaledTokens, unitsPerMicro), wait - policy.maxWaitMicros, 0
		end
	end
	local after = self.scaledTokens - needed
	if commit then
		self.scaledTokens = after
		self.taken = needed
	end
	local delay = 0
	if after < 0 then
		delay = ceilDiv(-after, unitsPerMicro)
	end
	return true, math.max(0, floorDiv(after, perToken)), ceilDiv(full - after, unitsPerMicro), 0, delay
end

function TokenBucket.store(self, policy, resetAfterMicros)
	local receipt = ''
	if self.taken then
		-- A number, not int(...): the reply turns it into an integer, exactly, without a string.format.
		receipt = self.lastMicros + floorDiv(policy.capacity * policy.periodMicros - self.scaledTokens - self.taken,
			policy.tokens)
	end
	if resetAfterMicros == 0 then
		-- A full bucket is the same as no bucket: keep no state for it.
		redis.call('DEL', self.key)
	else
		storePair(self.key, self.scaledTokens, self.lastMicros, resetAfterMicros)
	end
	return receipt
end

function TokenBucket.refund(self, policy, cost, receipt, nowMicros)
	-- Tokens are interchangeable: giving them back is right whoever took some since.
	local back = lessLostSince(cost * policy.periodMicros, tonumber(receipt), nowMicros, policy.tokens)
	self.scaledTokens = math.min(self.scaledTokens + back, policy.capacity * policy.periodMicros)
end

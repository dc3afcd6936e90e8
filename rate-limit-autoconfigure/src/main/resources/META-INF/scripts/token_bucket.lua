-- Token bucket: a line-by-line mirror of dev.ratelimit.core.TokenBucket, so
-- that the in-memory and Redis backends make the same decisions.
--
-- KEYS[i]  the bucket, a string 'scaledTokens lastMicros' (loadPair in lib.lua):
--            scaledTokens  tokens scaled by the refill period (one token = P units)
--            lastMicros    time of the last refill in µs
--          (a hash of fields t and ts before; still read)
--          A missing key is a full bucket; a full bucket is deleted.
-- ARGV     code 'tb', capacity, n tokens, per P µs (n/P reduced), cost, max wait µs
--          (wait mode: the tokens may go negative by what refills within it);
--          decide_token_bucket.lua takes the same as 'capacity n P maxWait', cost
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

-- The decision itself, on plain numbers: no table is read or written, so that
-- decide_token_bucket.lua, the driver of one token bucket alone, decides with
-- locals only, and TokenBucket.decide below, the algorithm's method for the
-- drivers of several policies, with the same code. The bucket (scaledTokens at
-- lastMicros), the policy (capacity, a refill of perMicro units per µs, one
-- token being perToken units, max wait), the cost and the time in; the five
-- values of a decision out (see ALGORITHMS in lib.lua), then the bucket after
-- it: refilled up to nowMicros, less the cost when commit and allowed.
local function decideTokens(scaledTokens, lastMicros, capacity, perMicro, perToken, maxWaitMicros, cost, nowMicros,
		commit)
	-- floorDiv(a, b) and ceilDiv(a, b) of lib.lua written out, (a - a % b) / b
	-- and (a + (-a) % b) / b, exact as they are: on the path of every decision,
	-- a Lua call costs the server more than the arithmetic it wraps.
	local full = capacity * perToken
	if nowMicros > lastMicros then
		local elapsed = nowMicros - lastMicros
		local missing = full - scaledTokens
		-- Compare times rather than multiply first, so elapsed * rate stays small.
		if elapsed >= (missing + (-missing) % perMicro) / perMicro then
			scaledTokens = full
		else
			scaledTokens = scaledTokens + elapsed * perMicro
		end
		lastMicros = nowMicros
	elseif scaledTokens > full then
		-- Kept under a larger quota (the key's plan or override changed) and no time has passed.
		scaledTokens = full
	end
	local needed = cost * perToken
	if scaledTokens < needed then
		local short = needed - scaledTokens
		local wait = (short + (-short) % perMicro) / perMicro
		-- Wait mode: a caller whose turn comes within max-wait takes its tokens now.
		if wait > maxWaitMicros then
			-- Math.max(0, ...) written out too: math is a global table, max a call into C.
			local remaining = (scaledTokens - scaledTokens % perToken) / perToken
			local missing = full - scaledTokens
			return false, (remaining > 0) and remaining or 0, (missing + (-missing) % perMicro) / perMicro,
				wait - maxWaitMicros, 0, scaledTokens, lastMicros
		end
	end
	local after = scaledTokens - needed
	local delay = 0
	if after < 0 then
		delay = (-after + after % perMicro) / perMicro
	end
	local remaining = (after - after % perToken) / perToken
	local missing = full - after
	if commit then
		scaledTokens = after
	end
	return true, (remaining > 0) and remaining or 0, (missing + (-missing) % perMicro) / perMicro, 0, delay,
		scaledTokens, lastMicros
end

-- TokenBucket#receipt: the earliest time the bucket, holding scaledTokens at
-- lastMicros after taking taken units, could have been full without them.
local function tokenReceipt(scaledTokens, lastMicros, full, taken, perMicro)
	-- floorDiv written out, as in decideTokens.
	local missing = full - scaledTokens - taken
	return lastMicros + (missing - missing % perMicro) / perMicro
end

function TokenBucket.decide(self, policy, cost, nowMicros, commit)
	local allowed, remaining, resetAfter, retryAfter, delay, scaledTokens, lastMicros = decideTokens(
		self.scaledTokens, self.lastMicros, policy.capacity, policy.tokens, policy.periodMicros,
		policy.maxWaitMicros, cost, nowMicros, commit)
	self.scaledTokens = scaledTokens
	self.lastMicros = lastMicros
	if allowed and commit then
		self.taken = cost * policy.periodMicros
	end
	return allowed, remaining, resetAfter, retryAfter, delay
end

function TokenBucket.store(self, policy, resetAfterMicros)
	local receipt = ''
	if self.taken then
		-- A number, not int(...): the reply turns it into an integer, exactly, without a string.format.
		receipt = tokenReceipt(self.scaledTokens, self.lastMicros, policy.capacity * policy.periodMicros, self.taken,
			policy.tokens)
	end
	if resetAfterMicros == 0 then
		-- A full bucket is the same as no bucket: keep no state for it.
		deleteState(self.key)
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

-- Leaky bucket as a queue (shaping): a line-by-line mirror of
-- dev.ratelimit.core.ShapingLeakyBucket.
--
-- KEYS[i]  the queue, a string 'drainMicros drainRemainder' (loadPair in lib.lua):
--            drainMicros     the whole µs at which the queue drains
--            drainRemainder  plus this many 1/n µs
--          (a hash of fields d and r before; still read)
--          A missing key is an empty queue; an empty queue is deleted.
-- ARGV     code 'ls', capacity, serves n units, per P µs (n/P reduced), cost
-- TTL      until the queue has drained
-- Receipt  'd:r' after this call's turn was added: a refund shortens the queue
--          only while that turn is still the last one.

-- Every method has its slot from the start (see ALGORITHMS in lib.lua).
local ShapingLeakyBucket = { rateBased = true, load = false, decide = false, store = false, refund = false }
ALGORITHMS['ls'] = ShapingLeakyBucket

function ShapingLeakyBucket.load(key, policy, nowMicros)
	local drainMicros, drainRemainder = loadPair(key, 'd', 'r')
	if drainMicros == nil or drainRemainder == nil then
		return { key = key, drainMicros = nowMicros, drainRemainder = 0 }
	end
	return { key = key, drainMicros = drainMicros, drainRemainder = drainRemainder }
end

-- Work still queued, in units of 1/n microseconds.
local function backlogOf(self, unitsPerMicro, nowMicros)
	local backlog = 0
	if self.drainMicros > nowMicros or (self.drainMicros == nowMicros and self.drainRemainder > 0) then
		backlog = (self.drainMicros - nowMicros) * unitsPerMicro + self.drainRemainder
	end
	return backlog
end

function ShapingLeakyBucket.decide(self, policy, cost, nowMicros, commit)
	local perToken = policy.periodMicros
	local unitsPerMicro = policy.tokens
	local full = policy.capacity * perToken
	local backlog = backlogOf(self, unitsPerMicro, nowMicros)
	local delay = ceilDiv(backlog, unitsPerMicro)
	local queued = backlog + cost * perToken
	if queued > full then
		-- Clamped at 0 where Java would throw: a server clock stepped back can
		-- leave more than a full queue ahead of "now".
		return false, floorDiv(math.max(full - backlog, 0), perToken), delay, ceilDiv(queued - full, unitsPerMicro), 0
	end
	if commit then
		self.drainMicros = nowMicros + floorDiv(queued, unitsPerMicro)
		self.drainRemainder = floorMod(queued, unitsPerMicro)
	end
	return true, floorDiv(full - queued, perToken), ceilDiv(queued, unitsPerMicro), 0, delay
end

local function tail(self)
	return int(self.drainMicros) .. ':' .. int(self.drainRemainder)
end

function ShapingLeakyBucket.store(self, policy, resetAfterMicros)
	if resetAfterMicros == 0 then
		-- Nothing queued is the same as no queue.
		deleteState(self.key)
		return ''
	end
	storePair(self.key, self.drainMicros, self.drainRemainder, resetAfterMicros)
	return tail(self)
end

function ShapingLeakyBucket.refund(self, policy, cost, receipt, nowMicros)
	-- Unlike tokens, turns are not interchangeable: callers queued behind this
	-- one were told when to go, and pulling the queue's end forward would give a
	-- newcomer a turn overlapping theirs. Leave the gap (a turn unused) instead.
	if receipt ~= tail(self) then
		return
	end
	local unitsPerMicro = policy.tokens
	local backlog = math.max(backlogOf(self, unitsPerMicro, nowMicros) - cost * policy.periodMicros, 0)
	self.drainMicros = nowMicros + floorDiv(backlog, unitsPerMicro)
	self.drainRemainder = floorMod(backlog, unitsPerMicro)
end

-- Sliding window log: a line-by-line mirror of dev.ratelimit.core.SlidingWindowLog.
--
-- KEYS[i]  the log, a sorted set
--            '<time>:<seq>:<cost>'  one member per admitted request, scored by
--                                   its time in µs; seq tells apart requests of
--                                   the same microsecond
--            's'                    the running sum of the costs still in the
--                                   window, stored as its negative score, so
--                                   that no scan is needed to count
--          Java's ring buffer in time order is the set's score order. A missing
--          key is an empty log; an empty log is deleted.
-- ARGV     code 'sl', capacity, window size in µs, 0 (unused), cost
-- TTL      until the newest entry leaves the window
-- Receipt  the member this call added: a refund removes exactly that entry.
--
-- Entries that left the window are dropped with one ZRANGEBYSCORE (to
-- subtract their costs from the sum) and one ZREMRANGEBYSCORE when the state
-- is written; only a denial walks the live entries, to find its retry time.

-- Every method has its slot from the start (see ALGORITHMS in lib.lua).
local SlidingWindowLog = { rateBased = false, load = false, decide = false, store = false, refund = false }
ALGORITHMS['sl'] = SlidingWindowLog

local SUM = 's'

local function costOf(member)
	return tonumber(string.match(member, ':(%d+)$'))
end

function SlidingWindowLog.load(key, policy, nowMicros)
	local stored = tonumber(redis.call('ZSCORE', key, SUM))
	-- droppedUpTo: entries up to this time have left the window and the sum;
	-- store removes them. Scores of entries are times (>= 0), the sum's is
	-- below 0, so the range (droppedUpTo, +inf) holds exactly the live entries.
	return { key = key, sum = (stored ~= nil) and -stored or 0, droppedUpTo = -1, appended = nil }
end

-- Java's loop over the ring buffer's head, as one range.
local function dropUpTo(self, upTo)
	if upTo <= self.droppedUpTo then
		return
	end
	local left = redis.call('ZRANGEBYSCORE', self.key, '(' .. int(self.droppedUpTo), int(upTo))
	for i = 1, #left do
		self.sum = self.sum - costOf(left[i])
	end
	self.droppedUpTo = upTo
end

local function newest(self)
	if self.appended ~= nil then
		return self.appended.time
	end
	local last = redis.call('ZREVRANGEBYSCORE', self.key, '+inf', '(' .. int(self.droppedUpTo), 'WITHSCORES',
		'LIMIT', '0', '1')
	return tonumber(last[2])
end

-- Time until the oldest entries, freeing at least excess units, leave the window.
local function retryAfter(self, excess, window, nowMicros)
	local freed = 0
	local offset = 0
	-- Pages that double in size: a short walk stays cheap, a long one stays linear.
	local count = 64
	while true do
		local page = redis.call('ZRANGEBYSCORE', self.key, '(' .. int(self.droppedUpTo), '+inf', 'WITHSCORES',
			'LIMIT', int(offset), int(count))
		if #page == 0 then
			return error('cost above capacity reached the log')
		end
		for i = 1, #page, 2 do
			freed = freed + costOf(page[i])
			if freed >= excess then
				return tonumber(page[i + 1]) + window - nowMicros
			end
		end
		offset = offset + count
		count = count * 2
	end
end

function SlidingWindowLog.decide(self, policy, cost, nowMicros, commit)
	local window = policy.windowMicros
	dropUpTo(self, nowMicros - window)
	local counted = self.sum + cost
	if counted > policy.capacity then
		return false, policy.capacity - self.sum, newest(self) + window - nowMicros,
			retryAfter(self, counted - policy.capacity, window, nowMicros), 0
	end
	if commit and cost > 0 then
		-- append(nowMicros, cost): store writes the member.
		self.appended = { time = nowMicros, cost = cost }
		self.sum = counted
	end
	-- Every entry costs at least 1, so a positive sum is Java's size > 0.
	local reset
	if cost > 0 then
		reset = window
	elseif self.sum > 0 then
		reset = newest(self) + window - nowMicros
	else
		reset = 0
	end
	return true, policy.capacity - counted, reset, 0, 0
end

-- Adds the entry under a member no other entry has.
local function append(self)
	local time = int(self.appended.time)
	local sequence = redis.call('ZCOUNT', self.key, time, time)
	while true do
		local member = time .. ':' .. int(sequence) .. ':' .. int(self.appended.cost)
		if redis.call('ZADD', self.key, 'NX', time, member) == 1 then
			return member
		end
		-- After a refund removed an earlier entry of this microsecond, the count
		-- can name a member still present: take the next number.
		sequence = sequence + 1
	end
end

function SlidingWindowLog.store(self, policy, resetAfterMicros)
	if resetAfterMicros == 0 then
		-- An empty log is the same as no log.
		redis.call('DEL', self.key)
		return ''
	end
	if self.droppedUpTo >= 0 then
		redis.call('ZREMRANGEBYSCORE', self.key, '0', int(self.droppedUpTo))
	end
	local receipt = ''
	if self.appended ~= nil then
		receipt = append(self)
	end
	redis.call('ZADD', self.key, int(-self.sum), SUM)
	expireAfter(self.key, resetAfterMicros)
	return receipt
end

function SlidingWindowLog.refund(self, policy, cost, receipt, nowMicros)
	local time = tonumber(redis.call('ZSCORE', self.key, receipt))
	-- An entry that already left the window is out of the sum; store drops it.
	if time ~= nil and time > self.droppedUpTo then
		redis.call('ZREM', self.key, receipt)
		self.sum = self.sum - costOf(receipt)
	end
end

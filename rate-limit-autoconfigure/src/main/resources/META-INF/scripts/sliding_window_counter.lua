-- Sliding window counter: a line-by-line mirror of
-- dev.ratelimit.core.SlidingWindowCounter.
--
-- KEYS[i]  the counters, a string of six whole numbers 's e l n ps pn'
--          (loadString in lib.lua); kept in time, not window numbers, so that
--          they survive a change of the window size (see SlidingWindowCounter)
--            s   start: when the current window began counting, which is when
--                the previous one ended (µs)
--            e   end: when the current window ends under the size it began
--                with (µs, exclusive)
--            l   last: the last time the current window counted (µs)
--            n   current: units counted in the current window
--            ps  previous start: when the previous window began counting (µs)
--            pn  previous: units counted in the previous window
--          A missing key counts nothing; counting nothing is deleted.
--          A hash is the counters as earlier versions kept them, read so that
--          an upgrade forgets no count: fields s, e, l, n, ps and pn as above,
--          or w, c and p (the current window's number and the two counts, as
--          versions before sizes could change wrote them).
-- ARGV     code 'sc', capacity, window size in µs, 0 (unused), cost
-- TTL      until nothing counted weighs on the estimate: one window after the
--          current one ends while it counts, else until the previous one
--          stops weighing
-- Receipt  the window's start: a refund uncounts the cost from that window,
--          whether it is still the current one or has become the previous one.

-- Every method has its slot from the start (see ALGORITHMS in lib.lua).
local SlidingWindowCounter = { rateBased = false, load = false, decide = false, store = false, refund = false }
ALGORITHMS['sc'] = SlidingWindowCounter

-- SlidingWindowCounter starts at Long.MIN_VALUE: before every window. Negative infinity
-- written out, not -math.huge: the top level of the function library runs at
-- FUNCTION LOAD, where Redis 7.0 offers no math table.
local NO_WINDOW = -1 / 0

-- The counters as earlier versions kept them, a hash (see KEYS above).
local function loadHash(key, policy)
	local stored = redis.call('HMGET', key, 's', 'e', 'l', 'n', 'ps', 'pn', 'w', 'c', 'p')
	local start, finish, last = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3])
	local current, previousStart, previous = tonumber(stored[4]), tonumber(stored[5]), tonumber(stored[6])
	local legacyWindow, legacyCurrent, legacyPrevious = tonumber(stored[7]), tonumber(stored[8]), tonumber(stored[9])
	if start == nil and legacyWindow ~= nil and legacyCurrent ~= nil then
		-- Written before sizes could change: window number w of the size in force, and the one before it.
		start = legacyWindow * policy.windowMicros
		finish = start + policy.windowMicros
		last = start
		current = legacyCurrent
		previousStart = start - policy.windowMicros
		previous = legacyPrevious or 0
	end
	if start == nil or finish == nil or last == nil or current == nil or previousStart == nil or previous == nil then
		return { key = key, start = NO_WINDOW, finish = NO_WINDOW, last = NO_WINDOW, previousStart = NO_WINDOW,
			current = 0, previous = 0 }
	end
	return { key = key, start = start, finish = finish, last = last, previousStart = previousStart,
		current = current, previous = previous }
end

function SlidingWindowCounter.load(key, policy, nowMicros)
	local stored = loadString(key)
	if stored == true then
		return loadHash(key, policy)
	end
	if not stored then
		return { key = key, start = NO_WINDOW, finish = NO_WINDOW, last = NO_WINDOW, previousStart = NO_WINDOW,
			current = 0, previous = 0 }
	end
	-- As loadPair reads two: one match, and + 0 converts each whole number exactly.
	local start, finish, last, current, previousStart, previous =
		string.match(stored, '^(-?%d+) (-?%d+) (-?%d+) (-?%d+) (-?%d+) (-?%d+)$')
	if not start then
		return stateError(key, stored)
	end
	return { key = key, start = start + 0, finish = finish + 0, last = last + 0, previousStart = previousStart + 0,
		current = current + 0, previous = previous + 0 }
end

-- When the current window ends under size: its own end, or sooner when the
-- size shrank, the end of the new size's window holding its last count.
local function windowEnd(self, size)
	return math.min(self.finish, floorDiv(self.last, size) * size + size)
end

-- Time until nothing counted so far weighs on the estimate.
local function reset(self, currentCount, start, finish, size, elapsed, nowMicros)
	if currentCount > 0 then
		return finish + size - nowMicros
	end
	return (self.previous > 0 and elapsed < size) and (start + size - nowMicros) or 0
end

-- Earliest wait after which the estimate leaves room for cost.
local function retryAfter(self, capacity, cost, finish, size, elapsed, nowMicros)
	local room = (capacity - cost) * size
	-- Later in this window, as the previous window's weight shrinks.
	local spare = room - self.current * size
	if spare >= 0 and self.previous > 0 then
		local weight = floorDiv(spare, self.previous)
		local wait = (size - weight) - elapsed
		if weight >= 1 and nowMicros + wait < finish then
			return wait
		end
	end
	-- In the next window, where this window's count becomes the previous one.
	local nextWindow = finish - nowMicros
	if self.current == 0 then
		return nextWindow
	end
	return nextWindow + math.max(0, size - floorDiv(room, self.current))
end

function SlidingWindowCounter.decide(self, policy, cost, nowMicros, commit)
	local size = policy.windowMicros
	local capacity = policy.capacity
	local finish = windowEnd(self, size)
	if nowMicros >= finish then
		-- The window after the one that ended: up to the new size's window holding its end.
		local nextEnd = floorDiv(finish, size) * size + size
		if nowMicros < nextEnd then
			self.previousStart = self.start
			self.previous = self.current
			self.start = finish
			self.finish = nextEnd
		else
			-- Nothing counted still weighs; counting begins now.
			self.previousStart = NO_WINDOW
			self.previous = 0
			self.start = nowMicros
			self.finish = floorDiv(nowMicros, size) * size + size
		end
		self.last = self.start
		self.current = 0
		finish = self.finish
	end
	local start = self.start
	local elapsed = math.min(math.max(nowMicros - start, 0), size)
	local weightedPrevious = self.previous * (size - elapsed)
	local counted = self.current + cost
	if weightedPrevious + counted * size > capacity * size then
		local remaining = math.max(0, floorDiv(capacity * size - weightedPrevious - self.current * size, size))
		return false, remaining, reset(self, self.current, start, finish, size, elapsed, nowMicros),
			retryAfter(self, capacity, cost, finish, size, elapsed, nowMicros), 0
	end
	if commit then
		self.current = counted
		self.last = math.max(self.last, nowMicros)
	end
	local remaining = floorDiv(capacity * size - weightedPrevious - counted * size, size)
	return true, remaining, reset(self, counted, start, finish, size, elapsed, nowMicros), 0, 0
end

function SlidingWindowCounter.store(self, policy, resetAfterMicros)
	if resetAfterMicros == 0 then
		-- Counting nothing is the same as no counters.
		deleteState(self.key)
		return ''
	end
	local start = int(self.start)
	-- A previous window that no longer weighs is stored as none.
	local previousStart = (self.previous > 0) and self.previousStart or 0
	storeString(self.key, string.format('%s %d %d %d %d %d', start, self.finish, self.last, self.current,
		previousStart, self.previous), resetAfterMicros)
	return start
end

function SlidingWindowCounter.refund(self, policy, cost, receipt, nowMicros)
	local window = tonumber(receipt)
	if self.start == window then
		self.current = math.max(self.current - cost, 0)
	elseif self.previousStart == window then
		self.previous = math.max(self.previous - cost, 0)
	end
end

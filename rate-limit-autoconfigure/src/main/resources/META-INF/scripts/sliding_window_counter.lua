-- Sliding window counter: a line-by-line mirror of
-- dev.ratelimit.core.SlidingWindowCounter.
--
-- KEYS[i]  the counters, a hash
--            w   window: the current window's index, floor(time / size)
--            c   current: units counted in that window
--            p   previous: units counted in the window before it
--          A missing key counts nothing; counting nothing is deleted.
-- ARGV     code 'sc', capacity, window size in µs, 0 (unused), cost
-- TTL      until nothing counted weighs on the estimate: the end of the next
--          window while the current one counts, else the end of this one
-- Receipt  the window's index: a refund uncounts the cost from that window,
--          whether it is still the current one or has become the previous one.

-- Every method has its slot from the start (see ALGORITHMS in lib.lua).
local SlidingWindowCounter = { rateBased = false, load = false, decide = false, store = false, refund = false }
ALGORITHMS['sc'] = SlidingWindowCounter

-- SlidingWindowCounter starts at Long.MIN_VALUE: before every window.
local NO_WINDOW = -math.huge

function SlidingWindowCounter.load(key, policy, nowMicros)
	local stored = redis.call('HMGET', key, 'w', 'c', 'p')
	local window, current, previous = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3])
	if window == nil or current == nil or previous == nil then
		return { key = key, window = NO_WINDOW, current = 0, previous = 0 }
	end
	return { key = key, window = window, current = current, previous = previous }
end

-- Time until nothing counted so far weighs on the estimate.
local function reset(self, currentCount, start, size, nowMicros)
	if currentCount > 0 then
		return start + 2 * size - nowMicros
	end
	return (self.previous > 0) and (start + size - nowMicros) or 0
end

-- Earliest wait after which the estimate leaves room for cost.
local function retryAfter(self, capacity, cost, start, size, elapsed, nowMicros)
	local room = (capacity - cost) * size
	-- Later in this window, as the previous window's weight shrinks.
	local spare = room - self.current * size
	if spare >= 0 and self.previous > 0 then
		local weight = floorDiv(spare, self.previous)
		if weight >= 1 then
			return (size - weight) - elapsed
		end
	end
	-- In the next window, where this window's count becomes the previous one.
	local nextWindow = start + size - nowMicros
	if self.current == 0 then
		return nextWindow
	end
	return nextWindow + math.max(0, size - floorDiv(room, self.current))
end

function SlidingWindowCounter.decide(self, policy, cost, nowMicros, commit)
	local size = policy.windowMicros
	local capacity = policy.capacity
	local index = floorDiv(nowMicros, size)
	if index == self.window + 1 then
		self.previous = self.current
		self.current = 0
		self.window = index
	elseif index > self.window then
		self.previous = 0
		self.current = 0
		self.window = index
	end
	local start = self.window * size
	local elapsed = math.min(math.max(nowMicros - start, 0), size - 1)
	local weightedPrevious = self.previous * (size - elapsed)
	local counted = self.current + cost
	if weightedPrevious + counted * size > capacity * size then
		local remaining = math.max(0, floorDiv(capacity * size - weightedPrevious - self.current * size, size))
		return false, remaining, reset(self, self.current, start, size, nowMicros),
			retryAfter(self, capacity, cost, start, size, elapsed, nowMicros), 0
	end
	if commit then
		self.current = counted
	end
	local remaining = floorDiv(capacity * size - weightedPrevious - counted * size, size)
	return true, remaining, reset(self, counted, start, size, nowMicros), 0, 0
end

function SlidingWindowCounter.store(self, policy, resetAfterMicros)
	if resetAfterMicros == 0 then
		-- Counting nothing is the same as no counters.
		redis.call('DEL', self.key)
		return ''
	end
	local window = int(self.window)
	redis.call('HSET', self.key, 'w', window, 'c', int(self.current), 'p', int(self.previous))
	expireAfter(self.key, resetAfterMicros)
	return window
end

function SlidingWindowCounter.refund(self, policy, cost, receipt, nowMicros)
	local window = tonumber(receipt)
	if self.window == window then
		self.current = math.max(self.current - cost, 0)
	elseif self.window == window + 1 then
		self.previous = math.max(self.previous - cost, 0)
	end
end

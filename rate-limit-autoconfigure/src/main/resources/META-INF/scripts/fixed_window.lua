-- Fixed window counter: a line-by-line mirror of dev.ratelimit.core.FixedWindow.
--
-- KEYS[i]  the window, a hash
--            w   window: the window's index, floor(time / size)
--            c   count: units counted in it
--          A missing key is an empty window; an empty window is deleted.
-- ARGV     code 'fw', capacity, window size in µs, 0 (unused), cost
-- TTL      until the window ends
-- Receipt  the window's index: a refund uncounts the cost only in that window.

-- Every method has its slot from the start (see ALGORITHMS in lib.lua).
local FixedWindow = { rateBased = false, load = false, decide = false, store = false, refund = false }
ALGORITHMS['fw'] = FixedWindow

-- FixedWindow starts at Long.MIN_VALUE: before every window.
local NO_WINDOW = -math.huge

function FixedWindow.load(key, policy, nowMicros)
	local stored = redis.call('HMGET', key, 'w', 'c')
	local window, count = tonumber(stored[1]), tonumber(stored[2])
	if window == nil or count == nil then
		return { key = key, window = NO_WINDOW, count = 0 }
	end
	return { key = key, window = window, count = count }
end

function FixedWindow.decide(self, policy, cost, nowMicros, commit)
	local size = policy.windowMicros
	local current = floorDiv(nowMicros, size)
	if current > self.window then
		self.window = current
		self.count = 0
	end
	local untilNext = (self.window + 1) * size - nowMicros
	local counted = self.count + cost
	if counted > policy.capacity then
		return false, policy.capacity - self.count, (self.count > 0) and untilNext or 0, untilNext, 0
	end
	if commit then
		self.count = counted
	end
	return true, policy.capacity - counted, (counted > 0) and untilNext or 0, 0, 0
end

function FixedWindow.store(self, policy, resetAfterMicros)
	if resetAfterMicros == 0 then
		-- Nothing counted is the same as no window.
		redis.call('DEL', self.key)
		return ''
	end
	local window = int(self.window)
	redis.call('HSET', self.key, 'w', window, 'c', int(self.count))
	expireAfter(self.key, resetAfterMicros)
	return window
end

function FixedWindow.refund(self, policy, cost, receipt, nowMicros)
	-- Once the window has passed, the cost no longer counts anyway.
	if self.window == tonumber(receipt) then
		self.count = math.max(self.count - cost, 0)
	end
end

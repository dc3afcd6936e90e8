-- Fixed window counter: a line-by-line mirror of dev.ratelimit.core.FixedWindow.
--
-- KEYS[i]  the window, a hash
--            w   window: the window's index, floor(time / size)
--            c   count: units counted in it
--          A missing key is an empty window; an empty window is deleted.
-- ARGV     code 'fw', capacity, window size in µs, 0 (unused), cost
-- TTL      until the window ends
-- Receipt  the window's index: a refund uncounts the cost only in that window.

local FixedWindow = { rateBased = false }
ALGORITHMS['fw'] = FixedWindow

-- FixedWindow starts at Long.MIN_VALUE: before every window.
local NO_WINDOW = -math.huge

function FixedWindow.load(key, policy, nowMicros)
	local stored = redis.call('HMGET', key, 'w', 'c')
	local self = { key = key, window = tonumber(stored[1]), count = tonumber(stored[2]) }
	if self.window == nil or self.count == nil then
		self.window = NO_WINDOW
		self.count = 0
	end
	return self
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
		return Decision(false, policy.capacity - self.count, policy.capacity,
			(self.count > 0) and untilNext or 0, untilNext)
	end
	if commit then
		self.count = counted
	end
	return Decision(true, policy.capacity - counted, policy.capacity, (counted > 0) and untilNext or 0, 0)
end

function FixedWindow.store(self, policy, decision)
	if decision.resetAfterMicros == 0 then
		-- Nothing counted is the same as no window.
		redis.call('DEL', self.key)
		return ''
	end
	redis.call('HSET', self.key, 'w', int(self.window), 'c', int(self.count))
	expireAfter(self.key, decision.resetAfterMicros)
	return int(self.window)
end

function FixedWindow.refund(self, policy, cost, receipt, nowMicros)
	-- Once the window has passed, the cost no longer counts anyway.
	if self.window == tonumber(receipt) then
		self.count = math.max(self.count - cost, 0)
	end
end

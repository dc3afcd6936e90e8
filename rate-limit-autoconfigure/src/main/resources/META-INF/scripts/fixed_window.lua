-- Fixed window counter: a line-by-line mirror of dev.ratelimit.core.FixedWindow.
--
-- KEYS[i]  the window, a string of four whole numbers 's e l n' (loadString
--          in lib.lua); kept in time, not window numbers, so that it
--          survives a change of the window size (see FixedWindow)
--            s   start: when the window began counting (µs)
--            e   end: when it ends under the size it began with (µs, exclusive)
--            l   last: the last time it counted (µs)
--            n   count: units counted in it
--          A missing key is an empty window; an empty window is deleted.
--          A hash is the window as earlier versions kept it, read so that an
--          upgrade forgets no count: fields s, e, l and n as above, or w and c
--          (the window's number and count, as versions before sizes could
--          change wrote them).
-- ARGV     code 'fw', capacity, window size in µs, 0 (unused), cost
-- TTL      until the window ends: never more than one window
-- Receipt  the window's start: a refund uncounts the cost only in that window.

-- Every method has its slot from the start (see ALGORITHMS in lib.lua).
local FixedWindow = { rateBased = false, load = false, decide = false, store = false, refund = false }
ALGORITHMS['fw'] = FixedWindow

-- FixedWindow starts at Long.MIN_VALUE: before every window. Negative infinity
-- written out, not -math.huge: the top level of the function library runs at
-- FUNCTION LOAD, where Redis 7.0 offers no math table.
local NO_WINDOW = -1 / 0

-- The window as earlier versions kept it, a hash (see KEYS above).
local function loadHash(key, policy)
	local stored = redis.call('HMGET', key, 's', 'e', 'l', 'n', 'w', 'c')
	local start, finish, last, count = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3]),
		tonumber(stored[4])
	local legacyWindow, legacyCount = tonumber(stored[5]), tonumber(stored[6])
	if start == nil and legacyWindow ~= nil and legacyCount ~= nil then
		-- Written before sizes could change: window number w of the size in force.
		start = legacyWindow * policy.windowMicros
		finish = start + policy.windowMicros
		last = start
		count = legacyCount
	end
	if start == nil or finish == nil or last == nil or count == nil then
		return { key = key, start = NO_WINDOW, finish = NO_WINDOW, last = NO_WINDOW, count = 0 }
	end
	return { key = key, start = start, finish = finish, last = last, count = count }
end

function FixedWindow.load(key, policy, nowMicros)
	local stored = loadString(key)
	if stored == true then
		return loadHash(key, policy)
	end
	if not stored then
		return { key = key, start = NO_WINDOW, finish = NO_WINDOW, last = NO_WINDOW, count = 0 }
	end
	-- As loadPair reads two: one match, and + 0 converts each whole number exactly.
	local start, finish, last, count = string.match(stored, '^(-?%d+) (-?%d+) (-?%d+) (-?%d+)$')
	if not start then
		return stateError(key, stored)
	end
	return { key = key, start = start + 0, finish = finish + 0, last = last + 0, count = count + 0 }
end

-- When the current window ends under size: its own end, or sooner when the
-- size shrank, the end of the new size's window holding its last count.
local function windowEnd(self, size)
	return math.min(self.finish, floorDiv(self.last, size) * size + size)
end

function FixedWindow.decide(self, policy, cost, nowMicros, commit)
	local size = policy.windowMicros
	local finish = windowEnd(self, size)
	if nowMicros >= finish then
		self.start = nowMicros
		self.last = nowMicros
		self.finish = floorDiv(nowMicros, size) * size + size
		self.count = 0
		finish = self.finish
	end
	local untilNext = finish - nowMicros
	local counted = self.count + cost
	if counted > policy.capacity then
		return false, policy.capacity - self.count, (self.count > 0) and untilNext or 0, untilNext, 0
	end
	if commit then
		self.count = counted
		self.last = math.max(self.last, nowMicros)
	end
	return true, policy.capacity - counted, (counted > 0) and untilNext or 0, 0, 0
end

function FixedWindow.store(self, policy, resetAfterMicros)
	if resetAfterMicros == 0 then
		-- Nothing counted is the same as no window.
		deleteState(self.key)
		return ''
	end
	local start = int(self.start)
	storeString(self.key, string.format('%s %d %d %d', start, self.finish, self.last, self.count), resetAfterMicros)
	return start
end

function FixedWindow.refund(self, policy, cost, receipt, nowMicros)
	-- Once the window has passed, the cost no longer counts anyway.
	if self.start == tonumber(receipt) then
		self.count = math.max(self.count - cost, 0)
	end
end

"""The Lua scripts of :class:`RedisSemaphore`: every state change is one of them (ADR 0015).

Each script runs atomically on the Redis server and reads the time from the server
(``TIME``), never from a client, so leases do not depend on the clients' clocks. Every
script is idempotent per acquisition id: a client that retries after a lost reply
gets the same answer, not a second permit. Each script starts by reaping (holders
past their lease, waiters that stopped polling) and, when that or its own change
frees permits, grants them to the queue's head in arrival order, so that the
invariant "nobody who could be granted is left waiting" holds after every script.

The limit and the lease are configuration stored in Redis, not arguments of each call:
the first acquisition stores its client's values when none are stored, every later one
follows what is stored, whatever its client asked (issue 39). CONFIGURE changes them
live, RESET forgets them (the next acquisition stores its client's again); both, and
the first store, are `configured` / `reset` events in the log.

Keys, all under one hash tag so that a Redis Cluster keeps them in one slot:
  config   hash: limit, lease (ms), held (the sum of the holders' weights)
  holders  zset: id -> lease end (server ms)
  holding  hash: id -> "weight token granted_at held" (held: the weight held with it)
  queue    zset: id -> arrival number (FIFO order)
  waiting  hash: id -> weight
  alive    zset: id -> the waiter's deadline to poll again (server ms)
  seq      counter for arrivals and fencing tokens, started at the server's time in µs
           so that tokens keep increasing across a restart that lost the data
  log      stream: granted / released / expired / withdrawn / evicted / configured / reset
           events (capped)
  gone     zset: id -> until when (server ms) an acquisition that left may not come back:
           a cancelled waiter's leave can reach Redis before its own acquire request
           (another connection), and that acquire must not then take a permit
"""

from __future__ import annotations

KEY_NAMES = ("config", "holders", "holding", "queue", "waiting", "alive", "seq", "log", "gone")

_PRELUDE = """
local CONFIG, HOLDERS, HOLDING, QUEUE, WAITING, ALIVE, SEQ, LOG, GONE =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local clock = redis.call('TIME')
local NOW = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local function log(event, id, weight, extra)
  local entry = {'event', event, 'id', id, 'weight', weight, 'at', NOW}
  for _, v in ipairs(extra or {}) do entry[#entry + 1] = v end
  redis.call('XADD', LOG, 'MAXLEN', '~', 10000, '*', unpack(entry))
end

local function held()
  return tonumber(redis.call('HGET', CONFIG, 'held') or '0')
end

local function unqueue(id)
  redis.call('ZREM', QUEUE, id)
  redis.call('HDEL', WAITING, id)
  redis.call('ZREM', ALIVE, id)
end

-- A holder past its lease has crashed, is partitioned or paused: its permits return.
-- A waiter that has not polled within a lease is gone: its place in the queue too.
-- Returns whether anything was freed, in which case the caller must grant.
local function reap()
  redis.call('ZREMRANGEBYSCORE', GONE, '-inf', NOW)
  local freed = false
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', HOLDERS, '-inf', NOW)) do
    local weight = tonumber(string.match(redis.call('HGET', HOLDING, id) or '0', '^(%d+)'))
    redis.call('ZREM', HOLDERS, id)
    redis.call('HDEL', HOLDING, id)
    redis.call('HINCRBY', CONFIG, 'held', 0 - weight)  -- not -weight: -0 is no integer to Redis
    log('expired', id, weight)
    freed = true
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', ALIVE, '-inf', NOW)) do
    unqueue(id)
    log('evicted', id, 0)
    freed = true  -- an evicted head may have been blocking the waiters behind it
  end
  return freed
end

-- Grant from the head of the queue, in arrival order, while the head fits. Stops at
-- the first waiter that does not fit even if one behind it would: skipping ahead
-- would let light requests starve a heavy one. A waiter heavier than the whole limit
-- steps aside (it blocks nobody) until a new limit makes it fit.
local function grant()
  local limit = tonumber(redis.call('HGET', CONFIG, 'limit') or '-1')
  local lease = tonumber(redis.call('HGET', CONFIG, 'lease') or '0')
  if limit < 0 then return 0 end
  local current, granted, skip = held(), 0, 0
  while true do
    local head = redis.call('ZRANGE', QUEUE, skip, skip, 'WITHSCORES')
    if #head == 0 then break end
    local id, arrival = head[1], head[2]
    local weight = tonumber(redis.call('HGET', WAITING, id))
    if weight > limit then
      skip = skip + 1
    elseif weight <= limit - current then
      local token = redis.call('INCR', SEQ)
      unqueue(id)
      redis.call('ZADD', HOLDERS, NOW + lease, id)
      current = current + weight
      -- Not `..`: Lua would write a token above 1e14 as 1.7953e+15. The last field,
      -- the weight held with this grant, says how busy the limit was (issue 43).
      redis.call('HSET', HOLDING, id, string.format('%d %d %d %d', weight, token, NOW, current))
      granted = granted + 1
      log('granted', id, weight, {'token', token, 'arrival', arrival, 'held', current,
                                  'limit', limit})
    else
      break
    end
  end
  redis.call('HSET', CONFIG, 'held', current)
  return granted
end

-- The stored limit and lease, -1 each when none is stored (after a reset).
local function settings()
  local stored = redis.call('HMGET', CONFIG, 'limit', 'lease')
  return tonumber(stored[1] or '-1'), tonumber(stored[2] or '-1')
end

-- Each reply that grants or waits also says what is stored: clients follow it.
local function holding(id)
  local entry = redis.call('HGET', HOLDING, id)
  if not entry then return nil end
  local weight, token, with = string.match(entry, '^(%d+) (%d+) %d+ ?(%d*)')
  local ends = tonumber(redis.call('ZSCORE', HOLDERS, id))
  local limit, lease = settings()
  return {'granted', tonumber(token), ends - NOW, tonumber(weight), limit, lease,
          tonumber(with) or -1}
end

local function store(id, limit, lease)
  local previous, previous_lease = settings()
  redis.call('HSET', CONFIG, 'limit', limit, 'lease', lease)
  -- Never reset `held`: after a reset, the holders granted before it still hold.
  redis.call('HSETNX', CONFIG, 'held', 0)
  redis.call('SETNX', SEQ, NOW * 1000)
  log('configured', id, 0, {'limit', limit, 'lease', lease, 'previous', previous})
  return previous, previous_lease
end

local function hint()
  redis.call('PUBLISH', CONFIG .. ':hint', NOW)
end
"""

# ARGV: id, weight, limit, lease ms, mode ("wait": queue up and poll; "try": never wait).
# The limit and lease are stored only if none are (first use, after a reset or a Redis
# that lost its data); otherwise the stored ones apply. Returns {"granted", token, ms
# left, weight, limit, lease ms, held with the grant} | {"waiting", rank, held, limit,
# lease ms} | {"no"}
# | {"gone"} (the id left: see `gone`).
ACQUIRE = (
    _PRELUDE
    + """
local id, weight, mode = ARGV[1], tonumber(ARGV[2]), ARGV[5]
local limit, lease = settings()
if limit < 0 or lease < 0 then
  limit, lease = tonumber(ARGV[3]), tonumber(ARGV[4])
  store(id, limit, lease)
end
if reap() then grant() end
-- A replay of a call whose reply was lost, or a poll that finds its grant.
local mine = holding(id)
if mine then return mine end
-- This acquisition was cancelled and has left: a late request of its own changes nothing.
if redis.call('ZSCORE', GONE, id) then return {'gone'} end
local queued = redis.call('ZSCORE', QUEUE, id)
-- Not queued: a first request, or a waiter back after its eviction or after its grant
-- expired before it polled to see it (it stalled for a lease; the log has that grant
-- and its `expired`): it starts again at the tail and may be granted again.
if not queued then
  if mode == 'try' and (weight > limit or weight > limit - held()) then return {'no'} end
  redis.call('ZADD', QUEUE, redis.call('INCR', SEQ), id)
  redis.call('HSET', WAITING, id, weight)
end
-- Each poll is the waiter's heartbeat: a live waiter is never evicted.
redis.call('ZADD', ALIVE, NOW + lease, id)
grant()
mine = holding(id)
if mine then return mine end
if mode == 'try' then
  -- Others were queued: a try never waits (and at the tail it blocked nobody).
  unqueue(id)
  return {'no'}
end
return {'waiting', redis.call('ZRANK', QUEUE, id), held(), limit, lease}
"""
)

# ARGV: id. Releases the id's permit, or takes it out of the queue; either way wakes
# whoever now fits. Returns {"released"} | {"withdrawn"} | {"absent"} (a lost lease,
# or a replay of a withdrawal); a replay of a release (its reply was lost, and the
# client's patience sent it again) is "released" again, not a lost lease.
LEAVE = (
    _PRELUDE
    + """
local id = ARGV[1]
local outcome = 'absent'
local freed = reap()
-- For a lease, a request of this id still in flight on another connection is refused.
local lease = tonumber(redis.call('HGET', CONFIG, 'lease') or '0')
local tombstone = NOW + math.max(lease, 60000)
redis.call('ZADD', GONE, tombstone, id)
local entry = redis.call('HGET', HOLDING, id)
if entry then
  local weight = tonumber(string.match(entry, '^(%d+)'))
  redis.call('ZREM', HOLDERS, id)
  redis.call('HDEL', HOLDING, id)
  redis.call('HINCRBY', CONFIG, 'held', 0 - weight)  -- not -weight: -0 is no integer to Redis
  log('released', id, weight)
  redis.call('ZADD', GONE, tombstone, id .. ' released')  -- the answer to a replay
  outcome, freed = 'released', true
elseif redis.call('ZSCORE', GONE, id .. ' released') then
  outcome = 'released'
elseif redis.call('ZSCORE', QUEUE, id) then
  unqueue(id)
  log('withdrawn', id, 0)
  -- A cancelled head may have been all that stopped the waiters behind it.
  outcome, freed = 'withdrawn', true
end
if freed and grant() > 0 then hint() end
return {outcome}
"""
)

# ARGV: id, the client's lease ms (used only while none is stored: after a reset).
# Extends the holder's lease by a full lease from now.
# Returns {"granted", token, ms left, weight, limit, lease ms} | {"lost"}.
HEARTBEAT = (
    _PRELUDE
    + """
local id = ARGV[1]
if reap() and grant() > 0 then hint() end
if not redis.call('HGET', HOLDING, id) then return {'lost'} end
local _, lease = settings()
if lease < 0 then lease = tonumber(ARGV[2] or '0') end
redis.call('ZADD', HOLDERS, 'XX', NOW + lease, id)
return holding(id)
"""
)

# ARGV: id (the administrator's client), limit, lease ms, "set" | "keep" (the stored lease,
# ARGV's if none is). The administrator's change, live: holders keep their permits (a
# lower limit grants nobody until enough are released), and waiters a higher limit fits
# are granted now, in arrival order. Returns {previous limit, previous lease ms,
# limit, lease ms} (-1 each when none was stored).
CONFIGURE = (
    _PRELUDE
    + """
local id, limit, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local _, stored_lease = settings()
if ARGV[4] == 'keep' and stored_lease >= 0 then lease = stored_lease end
local previous, previous_lease = store(id, limit, lease)
reap()
if grant() > 0 then hint() end
return {previous, previous_lease, limit, lease}
"""
)

# ARGV: id (the administrator's client). Forgets the stored limit and lease: the next
# acquisition stores its client's. Holders keep their permits and `held` its count;
# nobody is granted until then. Returns {previous limit, previous lease ms}.
RESET = (
    _PRELUDE
    + """
local previous, previous_lease = settings()
redis.call('HDEL', CONFIG, 'limit', 'lease')
log('reset', ARGV[1], 0, {'previous', previous})
return {previous, previous_lease}
"""
)

# No ARGV; changes nothing. Returns {limit, lease ms, held, now ms, holders, waiters}
# where holders is a flat list of id, weight, token, lease end, and waiters of id,
# weight, arrival, poll deadline, in arrival order.
STATISTICS = (
    _PRELUDE
    + """
local stored = redis.call('HMGET', CONFIG, 'limit', 'lease', 'held')
local holders = {}
for _, id in ipairs(redis.call('ZRANGE', HOLDERS, 0, -1)) do
  local weight, token = string.match(redis.call('HGET', HOLDING, id) or '0 0', '^(%d+) (%d+)')
  for _, v in ipairs({id, weight, token, redis.call('ZSCORE', HOLDERS, id)}) do
    holders[#holders + 1] = v
  end
end
local waiters = {}
local queue = redis.call('ZRANGE', QUEUE, 0, -1, 'WITHSCORES')
for i = 1, #queue, 2 do
  local id = queue[i]
  for _, v in ipairs({id, redis.call('HGET', WAITING, id), queue[i + 1],
                      redis.call('ZSCORE', ALIVE, id) or '0'}) do
    waiters[#waiters + 1] = v
  end
end
return {tonumber(stored[1] or '-1'), tonumber(stored[2] or '-1'), tonumber(stored[3] or '0'),
        NOW, holders, waiters}
"""
)

"""The Lua scripts of a host's shared rate and shared adaptive limit (issue 43, ADR 0019).

As the semaphore's (:mod:`.scripts`): atomic on the server, on the server's clock
(``TIME``), safe to send again after a lost reply.

``TAKE`` / ``GIVE_BACK``: the generic cell rate algorithm (GCRA) on one hash,
``{clonegate:rate:NAME}``: ``tat`` (the theoretical arrival time, server µs), the stored
``interval`` (µs) and ``size`` (the first taker's: every later one follows them), and
per client the last take (``take:CLIENT`` -> "id ready after") to answer a replay.
A take *reserves* the next token: the reply says how long to wait for it (0: now),
on the server's clock, so the clients' clocks do not matter. The key expires once the
bucket would be full again (at most ``size`` intervals plus one per waiting client);
a bucket that expired starts spaced again, which never allows more.

``ADAPT``: AIMD on a semaphore's stored limit (:class:`.adaptive.RedisAdaptiveLimit`),
with the semaphore's own keys (one hash tag, one slot of a Redis Cluster) and two more:
  adaptive  hash: limit (a float), ceiling, size (the stored limit it last wrote),
            floor (the grant counter when it last decreased: tokens up to it were
            granted before, in an older generation), generation, resets (in a row),
            increases, decreases, ignored
  reported  hash: client -> the last batch of signals applied (a replay applies none)
"""

from __future__ import annotations

from .scripts import _PRELUDE

__all__ = ["ADAPT", "ADAPTIVE_KEYS", "GIVE_BACK", "TAKE"]

ADAPTIVE_KEYS = ("adaptive", "reported")

# KEYS: the bucket. ARGV: interval µs, size, client, take id. Returns {wait µs, tat after
# this take, stored interval µs, stored size, when the token is due (server µs)},
# numbers as text (Lua's would round).
TAKE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local stored = redis.call('HMGET', KEYS[1], 'interval', 'size', 'tat', 'take:' .. ARGV[3])
local interval, size = tonumber(stored[1]), tonumber(stored[2])
if not interval or not size then interval, size = tonumber(ARGV[1]), tonumber(ARGV[2]) end
local function reply(ready, after)
  return {string.format('%d', math.max(0, ready - now)), string.format('%d', after),
          string.format('%d', interval), size, string.format('%d', math.max(ready, now))}
end
-- A replay of the take whose reply was lost: the same token, not a second one.
local id, ready, after = string.match(stored[4] or '', '^(%S+) (%d+) (%d+)$')
if id == ARGV[4] then return reply(tonumber(ready), tonumber(after)) end
local tolerance = (size - 1) * interval
-- Starts spaced: a bucket nobody took from holds one token, not a full bucket.
local tat = tonumber(stored[3]) or (now + tolerance)
local from = math.max(tat, now)
ready, after = from - tolerance, from + interval
redis.call('HSET', KEYS[1], 'interval', string.format('%d', interval), 'size', size,
           'tat', string.format('%d', after),
           'take:' .. ARGV[3], string.format('%s %d %d', ARGV[4], ready, after))
-- Once `after` has passed the bucket is full: forgetting it then allows no more.
redis.call('PEXPIRE', KEYS[1], math.floor((after - now) / 1000) + 1)
return reply(ready, after)
"""

# KEYS: the bucket. ARGV: client, take id. A taker cancelled while it waited (for its
# token or for the reply) gives its token back if nobody took one after it. Returns {1}
# if it did, {0} if not (the token is lost: the safe side).
GIVE_BACK = """
local stored = redis.call('HMGET', KEYS[1], 'tat', 'interval', 'take:' .. ARGV[1])
local id, _, after = string.match(stored[3] or '', '^(%S+) (%d+) (%d+)$')
if id ~= ARGV[2] or stored[1] ~= after then return {0} end
redis.call('HSET', KEYS[1], 'tat', string.format('%d', tonumber(after) - tonumber(stored[2])))
return {1}
"""

# KEYS: the semaphore's (.scripts.KEY_NAMES), then ADAPTIVE_KEYS. ARGV: client, batch
# number, ceiling, increase, decrease, reset burst, lease ms (both stored if the
# semaphore has no limit yet), then per signal: its name, the permit's token, the weight
# held with its grant (-1: unknown; busy if at least half the limit). Returns {size,
# limit, ceiling, generation} (limit as text).
ADAPT = (
    _PRELUDE
    + """
local ADAPTIVE, REPORTED = KEYS[10], KEYS[11]
local client, batch = ARGV[1], tonumber(ARGV[2])
local increase, decrease, burst = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local function number(field, default)
  return tonumber(redis.call('HGET', ADAPTIVE, field) or '') or default
end
local stored = settings()
if stored < 0 then
  stored = tonumber(ARGV[3])
  store(client, stored, tonumber(ARGV[7]))
end
-- No adaptation yet, or the stored limit was set outside it (`clonegate limit --host`,
-- a reset): the stored limit is the ceiling and the limit it starts from.
if number('size', -1) ~= stored then
  redis.call('HSET', ADAPTIVE, 'limit', stored, 'ceiling', stored, 'size', stored)
end
local limit, ceiling = number('limit', stored), number('ceiling', stored)
local floor, resets = number('floor', 0), number('resets', 0)
local counts = {increases = 0, decreases = 0, ignored = 0}
local last = 'success'
if batch > tonumber(redis.call('HGET', REPORTED, client) or '-1') then
  for i = 8, #ARGV, 3 do
    local signal, token, held = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
    if signal == 'success' then
      resets = 0
      -- Busy: at least half the limit (the float, now) held with the permit's grant.
      if held >= 0 and 2 * held >= limit then
        limit = math.min(limit + increase / limit, ceiling)
      end
    elseif signal ~= 'other' and token <= floor then
      counts.ignored = counts.ignored + 1  -- granted before the last decrease: old news
    elseif signal ~= 'other' then
      resets = signal == 'reset' and resets + 1 or burst
      if resets >= burst then
        -- Once per generation: permits granted from now on have tokens above `floor`.
        resets, floor, last = 0, tonumber(redis.call('GET', SEQ) or '0'), signal
        limit = math.max(limit * decrease, 1)
        redis.call('HINCRBY', ADAPTIVE, 'generation', 1)
      end
    end
  end
  redis.call('HSET', REPORTED, client, batch)
  redis.call('PEXPIRE', REPORTED, 86400000)
end
-- A sum of 1/limit steps lands just below a whole number: round first.
local size = math.max(1, math.min(ceiling, math.floor(limit + 1e-9)))
redis.call('HSET', ADAPTIVE, 'limit', string.format('%.17g', limit), 'floor',
           string.format('%d', floor), 'resets', resets, 'size', size)
redis.call('HINCRBY', ADAPTIVE, 'ignored', counts.ignored)
if size ~= stored then
  redis.call('HINCRBY', ADAPTIVE, size > stored and 'increases' or 'decreases', 1)
  redis.call('HSET', CONFIG, 'limit', size)
  log('adapted', client, 0, {'limit', size, 'previous', stored, 'signal', last})
  -- A higher limit grants the waiters it fits now, in arrival order.
  if reap() or size > stored then
    if grant() > 0 then hint() end
  end
end
return {size, string.format('%.17g', limit), ceiling, number('generation', 0)}
"""
)

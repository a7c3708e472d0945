"""The Lua scripts of :class:`.queue.RedisWorkQueue` (ADR 0015), apart from the queue's
Python so that each file stays readable: every key a script touches is passed in
``KEYS`` (one hash tag, one slot), and each script's comment says its keys, arguments
and reply."""

from __future__ import annotations

__all__ = [
    "CREATE_GROUP",
    "FINISH",
    "HOLDS",
    "IDLE",
    "RECLAIM",
    "RENEW",
    "RETRY",
    "START",
    "STATUS",
    "SUBMIT",
    "THRASH",
]

CREATE_GROUP = """
local ok, err = pcall(redis.call, 'XGROUP', 'CREATE', KEYS[1], 'workers', '0', 'MKSTREAM')
-- The error is a string in Redis 7.0, a table {err = ...} in some other versions.
local message = type(err) == 'table' and err.err or tostring(err)
if not ok and not string.find(message, 'BUSYGROUP') then error(err) end
"""

# KEYS: jobs, runs, meta, keys. ARGV: run, complete ('0' opens a submission, '1' closes
# it, '' neither), then index, url, key, listing (JSON, '' for a URL line: ADR 0023) for
# each job. Returns {added, duplicates}.
SUBMIT = (
    CREATE_GROUP
    + """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
redis.call('HSETNX', KEYS[3], 'created', now)
if ARGV[2] ~= '' then redis.call('HSET', KEYS[3], 'complete', ARGV[2]) end
local added, duplicates = 0, 0
for i = 3, #ARGV, 4 do
  redis.call('HINCRBY', KEYS[3], 'lines', 1)
  if redis.call('SADD', KEYS[4], ARGV[i + 2]) == 1 then
    redis.call('XADD', KEYS[1], '*', 'run', ARGV[1], 'index', ARGV[i], 'url', ARGV[i + 1],
               'key', ARGV[i + 2], 'listed', ARGV[i + 3])
    added = added + 1
  else
    duplicates = duplicates + 1
  end
end
redis.call('HINCRBY', KEYS[3], 'submitted', added)
return {added, duplicates}
"""
)

# Fencing (issue 39): only the delivery a worker still holds may start or report its
# job: pending, this worker's, and delivered as many times as when it got it (every
# reclaim counts one more; a renewal none). A stale worker writes and acknowledges
# nothing (its XACK would end the new owner's delivery): the scripts return -1.
HOLDS = """
local function holds(id, worker, deliveries)
  local pending = redis.call('XPENDING', KEYS[1], 'workers', id, id, 1)
  return pending[1] ~= nil and pending[1][2] == worker and pending[1][4] == tonumber(deliveries)
end
"""

# KEYS: jobs, reported, running, alone. ARGV: job id, key, worker, deliveries, alone
# ('1': the worker runs it and nothing else; the first such delivery is kept in `alone`).
# Returns 1 if the job should run, 0 if its report exists (it is acknowledged here).
START = (
    HOLDS
    + """
if not holds(ARGV[1], ARGV[3], ARGV[4]) then return -1 end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 1 then
  redis.call('XACK', KEYS[1], 'workers', ARGV[1])
  return 0
end
if ARGV[5] == '1' then redis.call('HSETNX', KEYS[4], ARGV[1], ARGV[4]) end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3] .. ' ' .. string.format('%d', now) .. ' ' .. ARGV[4])
return 1
"""
)

# KEYS: jobs, reported, results, running, meta, dead, alone, retries.
# ARGV: job id, key, index, worker, status, report JSON, dead (0/1), deliveries.
# Writes the report unless the key has one, then acknowledges; returns 1 if written.
FINISH = (
    HOLDS
    + """
if not holds(ARGV[1], ARGV[4], ARGV[8]) then return -1 end
local written = 0
if redis.call('SADD', KEYS[2], ARGV[2]) == 1 then
  redis.call('XADD', KEYS[3], '*', 'index', ARGV[3], 'key', ARGV[2], 'worker', ARGV[4],
             'report', ARGV[6])
  redis.call('HINCRBY', KEYS[5], 'done', 1)
  redis.call('HINCRBY', KEYS[5], 'status:' .. ARGV[5], 1)
  if ARGV[7] == '1' then
    redis.call('XADD', KEYS[6], '*', 'job', ARGV[1], 'key', ARGV[2], 'report', ARGV[6])
  end
  written = 1
end
local running = redis.call('HGET', KEYS[4], ARGV[2])
if running and string.sub(running, 1, #ARGV[4] + 1) == ARGV[4] .. ' ' then
  redis.call('HDEL', KEYS[4], ARGV[2])
end
redis.call('HDEL', KEYS[7], ARGV[1])
redis.call('HDEL', KEYS[8], ARGV[2])
redis.call('XACK', KEYS[1], 'workers', ARGV[1])
return written
"""
)

# KEYS: jobs. ARGV: worker, then job id and deliveries for each job. Resets the idle
# time of the deliveries this worker still holds (so nobody reclaims them); returns the
# positions (from 0) of those it does not: another worker holds them now.
RENEW = """
local lost = {}
for i = 2, #ARGV, 2 do
  local pending = redis.call('XPENDING', KEYS[1], 'workers', ARGV[i], ARGV[i], 1)[1]
  if pending and pending[2] == ARGV[1] and pending[4] == tonumber(ARGV[i + 1]) then
    redis.call('XCLAIM', KEYS[1], 'workers', ARGV[1], 0, ARGV[i], 'JUSTID')
  else
    lost[#lost + 1] = (i - 2) / 2
  end
end
return lost
"""

# Infrastructure errors (issue 39): a job put back by RETRY waits in the zset `retry`
# (score: when it is due, server ms; member: its fields as JSON), then goes back into
# `jobs` as a new entry: a new id, so every holder of the old delivery is fenced out.
RETRY = (
    HOLDS
    + """
-- KEYS: jobs, running, retry, alone, retries. ARGV: job id, key, worker, deliveries,
-- reason, first delay ms, longest delay ms, jitter (0.5 to 1, the client's: a script's
-- math.random repeats). Returns {retries, delay ms}; -1 if not this worker's, 0 if gone.
if not holds(ARGV[1], ARGV[3], ARGV[4]) then return -1 end
local entry = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1])[1]
if not entry then  -- pending but deleted from the stream: nothing left to run
  redis.call('XACK', KEYS[1], 'workers', ARGV[1])
  return 0
end
local fields = {}
for i = 1, #entry[2], 2 do fields[entry[2][i]] = entry[2][i + 1] end
local deliveries = tonumber(ARGV[4])
local first_alone = tonumber(redis.call('HGET', KEYS[4], ARGV[1]))
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('XACK', KEYS[1], 'workers', ARGV[1])
redis.call('XDEL', KEYS[1], ARGV[1])
local running = redis.call('HGET', KEYS[2], ARGV[2])
if running and string.sub(running, 1, #ARGV[3] + 1) == ARGV[3] .. ' ' then
  redis.call('HDEL', KEYS[2], ARGV[2])
end
local retries = tonumber(fields.retries or '0') + 1
local delay = math.floor(math.min(tonumber(ARGV[7]),
                                  tonumber(ARGV[6]) * 2 ^ (retries - 1)) * tonumber(ARGV[8]))
local clock = redis.call('TIME')
local due = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000) + delay
-- Deaths carried over: those of the entry's earlier deliveries (not this one's).
local alone = fields.alone == '1' or (first_alone ~= nil and first_alone < deliveries)
redis.call('ZADD', KEYS[3], due, cjson.encode({
  was = ARGV[1], run = fields.run, index = fields.index, url = fields.url, key = fields.key,
  listed = fields.listed or '', retries = tostring(retries),
  deaths = tostring(tonumber(fields.deaths or '0') + deliveries - 1),
  alone = alone and '1' or '0'}))
redis.call('HSET', KEYS[5], ARGV[2], string.format('%d %d ', retries, due) .. ARGV[5])
return {retries, delay}
"""
)

# KEYS: jobs, retry, alone. ARGV: worker, min idle ms, claim ('1' claims, '0' only looks).
# First queues again the retries that are due. Then finds the oldest job idle that long
# (its worker died) and claims it: one at a time, to run alone (poison isolation).
# Returns {found (0/1)}, then, if claimed: id, deliveries, run, index, url, key, retries,
# deaths before this entry, died alone before (0/1), listing ('' if none).
RECLAIM = (
    CREATE_GROUP
    + """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)) do
  local job = cjson.decode(member)
  redis.call('XADD', KEYS[1], '*', 'run', job.run, 'index', job.index, 'url', job.url,
             'key', job.key, 'retries', job.retries, 'deaths', job.deaths, 'alone', job.alone,
             'listed', job.listed or '')
  redis.call('ZREM', KEYS[2], member)
end
for _ = 1, 10 do  -- an entry deleted meanwhile (XCLAIM drops it) lets the next one in
  local idle = redis.call('XPENDING', KEYS[1], 'workers', 'IDLE', ARGV[2], '-', '+', 1)[1]
  if not idle then return {0} end
  if ARGV[3] ~= '1' then return {1} end
  local entry = redis.call('XCLAIM', KEYS[1], 'workers', ARGV[1], ARGV[2], idle[1])[1]
  if entry and entry[2] then
    local fields = {}
    for i = 1, #entry[2], 2 do fields[entry[2][i]] = entry[2][i + 1] end
    local pending = redis.call('XPENDING', KEYS[1], 'workers', idle[1], idle[1], 1)[1]
    local alone = fields.alone == '1' or redis.call('HEXISTS', KEYS[3], idle[1]) == 1
    return {1, idle[1], pending[4], fields.run, fields.index, fields.url, fields.key,
            fields.retries or '0', fields.deaths or '0', alone and '1' or '0',
            fields.listed or ''}
  end
end
return {0}
"""
)

# KEYS: jobs, retry. Returns 1 when no job is pending (being run), undelivered, or
# waiting to be retried.
IDLE = """
if redis.call('ZCARD', KEYS[2]) > 0 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return 1 end
if redis.call('XPENDING', KEYS[1], 'workers')[1] > 0 then return 0 end
local last = nil
local info = redis.call('XINFO', 'STREAM', KEYS[1])
for i = 1, #info, 2 do if info[i] == 'last-generated-id' then last = info[i + 1] end end
for _, group in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  for i = 1, #group, 2 do
    if group[i] == 'last-delivered-id' and group[i + 1] ~= last then return 0 end
  end
end
return 1
"""

# KEYS: meta, running, results, retries. Returns {now ms, meta flat, running flat, the
# last report's stream id or '', retries flat}.
STATUS = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)[1]
return {now, redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]),
        last and last[1] or '', redis.call('HGETALL', KEYS[4])}
"""

# KEYS: the meta of each run. ARGV: stretches. Counts ``stretches`` of memory thrash in
# each run that exists (a run deleted meanwhile is not made again). Returns nothing.
THRASH = """
for i = 1, #KEYS do
    if redis.call('EXISTS', KEYS[i]) == 1 then
        redis.call('HINCRBY', KEYS[i], 'memory_thrash', ARGV[1])
    end
end
"""

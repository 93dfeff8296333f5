/**
 * Lua scripts run atomically by Redis, so limits shared by many gateway nodes are checked and reserved as one
 * step: no node can admit a request between another node's check and its increment. Time comes from Redis
 * (`TIME`), not from the nodes, so clock skew between nodes cannot stretch a window.
 *
 * Per subject the keys are: requests window (hash second -> count), tokens window (hash second -> tokens),
 * concurrency leases (sorted set lease -> expiry ms), daily spend and monthly spend (integers, micro-dollars). After
 * them, one key per request's partition: the reservations not yet settled (sorted set lease -> the second it was
 * admitted in). Settling removes the reservation first and corrects the counters only if it was there, so a
 * settlement can be sent again (after a timeout, or to take back an admission whose answer never came) and counts
 * once.
 */

/** How long an unsettled reservation is kept (a request never runs this long; a dead node's are forgotten then). */
export const reservationLifetimeSeconds = 2 * 86_400;

export const admitScript = `
local time = redis.call('TIME')
local second = tonumber(time[1])
local nowMs = second * 1000 + math.floor(tonumber(time[2]) / 1000)
local subjects = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local lease = ARGV[4]
local leaseTtl = tonumber(ARGV[5])

local function window(key)
  local raw = redis.call('HGETALL', key)
  local total, buckets = 0, {}
  for index = 1, #raw, 2 do
    local bucket = tonumber(raw[index])
    if bucket <= second - 60 then
      redis.call('HDEL', key, raw[index])
    else
      local count = tonumber(raw[index + 1])
      total = total + count
      buckets[#buckets + 1] = { bucket, count }
    end
  end
  table.sort(buckets, function(a, b) return a[1] < b[1] end)
  return total, buckets
end

local function retryAfter(buckets, total, needed, limit)
  local freed = 0
  for _, bucket in ipairs(buckets) do
    freed = freed + bucket[2]
    if total - freed + needed <= limit then return math.max(1, (bucket[1] + 60) * 1000 - nowMs) end
  end
  return 60000
end

local totals = {}
for index = 0, subjects - 1 do
  local key = index * 5
  local arg = 6 + index * 7
  local rpm, tpm, concurrency = tonumber(ARGV[arg]), tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2])
  local dayBudget, monthBudget = tonumber(ARGV[arg + 3]), tonumber(ARGV[arg + 4])
  local state = { 0, 0 }
  if rpm > 0 then
    local total, buckets = window(KEYS[key + 1])
    if total + 1 > rpm then return { 'rejected', index, 'requests', rpm, retryAfter(buckets, total, 1, rpm), total } end
    state[1] = total
  end
  if tpm > 0 then
    local total, buckets = window(KEYS[key + 2])
    if tokens > tpm then return { 'rejected', index, 'tokens_too_large', tpm, 0, total } end
    if total + tokens > tpm then return { 'rejected', index, 'tokens', tpm, retryAfter(buckets, total, tokens, tpm), total } end
    state[2] = total
  end
  if concurrency > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[key + 3], '-inf', nowMs)
    if redis.call('ZCARD', KEYS[key + 3]) >= concurrency then return { 'rejected', index, 'concurrency', concurrency, 1000, 0 } end
  end
  if dayBudget >= 0 then
    local spent = redis.call('GET', KEYS[key + 4])
    if not spent then return { 'load', index, 'day' } end
    if tonumber(spent) >= dayBudget then return { 'rejected', index, 'daily_budget', dayBudget, 0, 0 } end
  end
  if monthBudget >= 0 then
    local spent = redis.call('GET', KEYS[key + 5])
    if not spent then return { 'load', index, 'month' } end
    if tonumber(spent) >= monthBudget then return { 'rejected', index, 'monthly_budget', monthBudget, 0, 0 } end
  end
  totals[index + 1] = state
end

local reservations = KEYS[subjects * 5 + 1]
redis.call('ZADD', reservations, second, lease)
redis.call('ZREMRANGEBYSCORE', reservations, '-inf', second - ${reservationLifetimeSeconds})
redis.call('EXPIRE', reservations, ${reservationLifetimeSeconds})
local result = { 'admitted', second, nowMs }
for index = 0, subjects - 1 do
  local key = index * 5
  local arg = 6 + index * 7
  local rpm, tpm, concurrency = tonumber(ARGV[arg]), tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2])
  local dayBudget, monthBudget = tonumber(ARGV[arg + 3]), tonumber(ARGV[arg + 4])
  if rpm > 0 then
    redis.call('HINCRBY', KEYS[key + 1], second, 1)
    redis.call('PEXPIRE', KEYS[key + 1], 61000)
  end
  if tpm > 0 then
    redis.call('HINCRBY', KEYS[key + 2], second, tokens)
    redis.call('PEXPIRE', KEYS[key + 2], 61000)
  end
  if concurrency > 0 then
    redis.call('ZADD', KEYS[key + 3], nowMs + leaseTtl, lease)
    redis.call('PEXPIRE', KEYS[key + 3], leaseTtl)
  end
  if dayBudget >= 0 then redis.call('INCRBY', KEYS[key + 4], cost) end
  if monthBudget >= 0 then redis.call('INCRBY', KEYS[key + 5], cost) end
  result[#result + 1] = totals[index + 1][1] + 1
  result[#result + 1] = totals[index + 1][2] + tokens
end
return result
`;

/**
 * Replaces a reservation with actual use: token and cost deltas, and the concurrency lease released. With `cancel`
 * set, the admission is taken back whole (its request is no longer counted either): the gateway did not get the
 * admission's answer in time and decided without it. Per subject the keys are requests, tokens, leases, daily and
 * monthly spend; the flags say which of those limits the subject has. The last argument is the request's whole cost,
 * added to spend counters that exist when Redis no longer knows the reservation (it restarted empty while the request
 * ran): those counters were seeded from the request log, which gets the request's row only after this settlement.
 * The gateway sends 0 there when it resends a settlement, since the first attempt may have counted it already.
 */
export const settleScript = `
local subjects = tonumber(ARGV[1])
local tokenDelta = tonumber(ARGV[2])
local costDelta = tonumber(ARGV[3])
local lease = ARGV[4]
local cancel = ARGV[5] == '1'
local forgottenCost = tonumber(ARGV[6 + subjects])
local reservations = KEYS[subjects * 5 + 1]
local second = redis.call('ZSCORE', reservations, lease)
local reserved = second and redis.call('ZREM', reservations, lease) == 1
for index = 0, subjects - 1 do
  local key = index * 5
  local flags = ARGV[6 + index]
  if string.sub(flags, 3, 3) == '1' then redis.call('ZREM', KEYS[key + 3], lease) end
  if reserved then
    if cancel and string.sub(flags, 1, 1) == '1' and redis.call('HEXISTS', KEYS[key + 1], second) == 1 then
      if redis.call('HINCRBY', KEYS[key + 1], second, -1) < 0 then redis.call('HSET', KEYS[key + 1], second, 0) end
    end
    if string.sub(flags, 2, 2) == '1' and tokenDelta ~= 0 and redis.call('HEXISTS', KEYS[key + 2], second) == 1 then
      if redis.call('HINCRBY', KEYS[key + 2], second, tokenDelta) < 0 then redis.call('HSET', KEYS[key + 2], second, 0) end
    end
    if string.sub(flags, 4, 4) == '1' and costDelta ~= 0 and redis.call('EXISTS', KEYS[key + 4]) == 1 then
      redis.call('INCRBY', KEYS[key + 4], costDelta)
    end
    if string.sub(flags, 5, 5) == '1' and costDelta ~= 0 and redis.call('EXISTS', KEYS[key + 5]) == 1 then
      redis.call('INCRBY', KEYS[key + 5], costDelta)
    end
  elseif forgottenCost > 0 then
    if string.sub(flags, 4, 4) == '1' and redis.call('EXISTS', KEYS[key + 4]) == 1 then
      redis.call('INCRBY', KEYS[key + 4], forgottenCost)
    end
    if string.sub(flags, 5, 5) == '1' and redis.call('EXISTS', KEYS[key + 5]) == 1 then
      redis.call('INCRBY', KEYS[key + 5], forgottenCost)
    end
  end
end
return reserved and 1 or 0
`;

/**
 * Keeps the concurrency leases of requests still running alive: moves the lease's expiry (in each subject's set) to
 * now + ttl, only where it is still there (XX), and keeps the set itself from expiring before it.
 */
export const renewLeaseScript = `
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lease = ARGV[1]
local ttl = tonumber(ARGV[2])
for index = 1, #KEYS do
  if redis.call('ZSCORE', KEYS[index], lease) then
    redis.call('ZADD', KEYS[index], 'XX', nowMs + ttl, lease)
    if redis.call('PTTL', KEYS[index]) < ttl then redis.call('PEXPIRE', KEYS[index], ttl) end
  end
end
return 1
`;

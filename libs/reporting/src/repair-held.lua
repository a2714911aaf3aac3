-- Sets each counter's `reserved` and `leased` to what the organisation's records in flight hold:
-- reservations ("amount|H1|H2...") and leases (id -> H, id# -> amount) naming it. A record that
-- cannot be read counts for nothing (the sweep moves such records aside). One script, so no
-- reservation or lease changes between reading the records and setting the counters.
-- Codec: REPAIR_HELD in budget-reconcile-scripts.ts.
-- KEYS: R, R:malformed, H1..Hn. Returns per counter reserved before, after, leased before, after
-- (strings; '-1' before: no counter, left alone), then the quarantined records as id, record
-- pairs (deleted: the caller audits them).
-- Sums are kept exact past 2^53 (a soft budget's many reservations), where a Lua number is not:
-- each amount is split at 10^8 and the two parts summed apart.
local function add(sum, v)
  local s = string.match(v or '', '^%d+$')
  if not s then return false end
  local lo = tonumber(string.sub(s, -8))
  local hi = #s > 8 and tonumber(string.sub(s, 1, -9)) or 0
  sum[1], sum[2] = sum[1] + hi, sum[2] + lo
  return true
end
local function fmt(sum)
  local hi = sum[1] + math.floor(sum[2] / 100000000)
  local lo = sum[2] % 100000000
  if hi == 0 then return string.format('%d', lo) end
  return string.format('%d%08d', hi, lo)
end
local held = {}
for i = 3, #KEYS do held[KEYS[i]] = {{0, 0}, {0, 0}} end
local all = redis.call('HGETALL', KEYS[1])
local byId = {}
for i = 1, #all, 2 do byId[all[i]] = all[i + 1] end
for id, rec in pairs(byId) do
  if string.sub(id, 1, 2) == 'L:' and string.sub(id, -1) ~= '#' then
    if held[rec] then add(held[rec][2], byId[id .. '#']) end
  elseif string.sub(id, 1, 2) ~= 'L:' then
    local amt = nil
    for part in string.gmatch(rec, '[^|]+') do
      if not amt then
        amt = string.match(part, '^%d+$')
        if not amt then break end
      elseif held[part] then
        add(held[part][1], amt)
      end
    end
  end
end
local out = {}
for i = 3, #KEYS do
  local h = KEYS[i]
  if redis.call('TYPE', h)['ok'] ~= 'hash' or redis.call('HEXISTS', h, 'spent') == 0 then
    out[#out+1] = '-1'; out[#out+1] = '0'; out[#out+1] = '-1'; out[#out+1] = '0'
  else
    local v = redis.call('HMGET', h, 'reserved', 'leased')
    local r = fmt(held[h][1])
    local l = fmt(held[h][2])
    out[#out+1] = v[1] or '0'; out[#out+1] = r; out[#out+1] = v[2] or '0'; out[#out+1] = l
    redis.call('HSET', h, 'reserved', r, 'leased', l)
  end
end
local bad = redis.call('HGETALL', KEYS[2])
redis.call('DEL', KEYS[2])
for i = 1, #bad do out[#out+1] = bad[i] end
return out

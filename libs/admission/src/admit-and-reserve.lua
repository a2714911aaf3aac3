-- Admission: checks every rate limit and every budget of a call, and only if all pass counts the
-- call and reserves its estimate; a refused call holds nothing, anywhere. Runs after rate-limit.lua
-- and budget.lua (their functions are prepended). Codec: ADMIT_AND_RESERVE in admission-scripts.ts.
-- KEYS: the shard's epoch, the rate-limit keys, then the budget keys.
-- ARGV: #rate-limit keys, #rate-limit args, the rate-limit args, then the budget args.
-- Returns {0, budget_apply's answer} (admitted; {0, {1}} with no budget), {1, rl_check's refusal},
-- {2, budget_check's refusal or missing counter}, or {3} when the epoch is gone (Redis lost its
-- data: counters are being rebuilt, nothing is admitted).
if redis.call('EXISTS', KEYS[1]) == 0 then return {3} end
local nrk, nra = tonumber(ARGV[1]), tonumber(ARGV[2])
local RK, RA, BK, BA = {}, {}, {}, {}
for i = 2, #KEYS do
  if i - 1 <= nrk then RK[#RK+1] = KEYS[i] else BK[#BK+1] = KEYS[i] end
end
for i = 3, #ARGV do
  if i <= 2 + nra then RA[#RA+1] = ARGV[i] else BA[#BA+1] = ARGV[i] end
end
if nrk > 0 then
  local refusal = rl_check(RK, RA)
  if refusal then return {1, refusal} end
end
local checked = {1}
if #BK > 0 then
  checked = budget_check(BK, BA)
  if checked[1] ~= 1 then return {2, checked} end
end
if nrk > 0 then rl_apply(RK, RA) end
if #BK > 0 then return {0, budget_apply(BK, BA, checked)} end
return {0, {1}}

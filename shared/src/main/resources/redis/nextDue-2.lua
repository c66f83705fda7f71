--[[
  The earliest score of each of several shards over its timer keys (every tenant and deadline kind):
  the sweep's next wake-up. On a single-node Redis one call reads every held shard (an idle sweep reads
  them every poll, 16 calls a poll when each shard was a call); on a cluster each shard is a call.

  Input:
    ARGV[1]  keys per shard (n): KEYS holds the shards one after another, n keys each
    KEYS[i]  timers of one tenant and kind of a shard (one slot per shard)
  Output:
    one string per shard, in KEYS' order: its earliest score (a deadline or a claim lease's expiry), or
    "" when all its keys are empty
]]
local per = tonumber(ARGV[1])
local out = {}
for s = 0, #KEYS / per - 1 do
  local best = false
  for k = s * per + 1, s * per + per do
    local first = redis.call("ZRANGE", KEYS[k], 0, 0, "WITHSCORES")
    if #first == 2 then
      local score = tonumber(first[2])
      if not best or score < best then
        best = score
      end
    end
  end
  out[#out + 1] = best and string.format("%.0f", best) or ""
end
return out

--[[
  The earliest score over one shard's timer keys (every deadline kind): the sweep's next wake-up.
  One round trip per shard, as before there were kinds: an idle sweep reads its shards every poll.

  Input:
    KEYS[i]  timers of kind i of one shard (one slot)
  Output:
    the earliest score as a string (a deadline or a claim lease's expiry), or false when all are empty
]]
local best = false
for k = 1, #KEYS do
  local first = redis.call("ZRANGE", KEYS[k], 0, 0, "WITHSCORES")
  if #first == 2 then
    local score = tonumber(first[2])
    if not best or score < best then
      best = score
    end
  end
end
if best then
  return string.format("%.0f", best)
end
return false

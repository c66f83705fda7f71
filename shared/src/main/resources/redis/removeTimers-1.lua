--[[
  Removes members from several timer sets in one call. A batch whose subjects hash to several shards (a
  lifecycle step's batch, a compensation pass, the acknowledgements of shards no claim carried) was a
  ZREM per shard, a round trip each; on a single-node Redis it is one call. A cluster refuses keys of
  several slots in one script: there the caller sends a ZREM per shard.

  Input:
    KEYS[i]   a timer set (of any shard where Redis is a single node)
    ARGV[i]   how many members KEYS[i] loses, for i = 1 .. #KEYS; then the members, set after set
  Output:
    how many members were removed
]]
local rcall = redis.call
local n = #KEYS
local at = n + 1
local removed = 0
for k = 1, n do
  local count = tonumber(ARGV[k])
  -- ZREM in chunks of 200 members: unpack() of thousands of arguments can overflow Lua's C stack
  for from = at, at + count - 1, 200 do
    removed = removed + rcall("ZREM", KEYS[k], unpack(ARGV, from, math.min(from + 199, at + count - 1)))
  end
  at = at + count
end
return removed

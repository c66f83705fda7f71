--[[
  Claims the due timers of one shard: members whose deadline is <= now, at most `limit` of them, and moves
  their score to now + lease. A claimer that dies mid-close thereby gives its orders back when the lease runs
  out; one that succeeds removes them (ZREM) after its commit. Claim and lease happen in one atomic step: no
  window in which a popped id lives only in a worker's memory.

  Input:
    KEYS[1] timers   ZSET  member = order id, score = deadline epoch ms (lease expiry once claimed)
    ARGV[1] now      epoch ms of the one clock all workers share (Redis TIME, read by the caller)
    ARGV[2] lease    ms a claim stays invisible to other claimers
    ARGV[3] limit    max members claimed in this call
  Output:
    array of claimed order ids, oldest deadline first (empty when nothing is due)
]]
local rcall = redis.call
local timersKey = KEYS[1]
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])

local due = rcall("ZRANGEBYSCORE", timersKey, "-inf", now, "LIMIT", 0, limit)
local leaseUntil = now + lease
-- Bench copy of claimDue-1 (TriggerBench): ZADD in chunks of 2,000 members instead of 200; 4,000 arguments stay under Lua's C stack limit (LUAI_MAXCSTACK 8,000).
local chunk = {}
for i = 1, #due do
  chunk[#chunk + 1] = leaseUntil
  chunk[#chunk + 1] = due[i]
  if #chunk == 4000 or i == #due then
    rcall("ZADD", timersKey, "XX", unpack(chunk))
    chunk = {}
  end
end
return due

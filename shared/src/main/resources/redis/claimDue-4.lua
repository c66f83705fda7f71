--[[
  Claims the due timers of one shard, for every deadline kind at once (one round trip per shard):
  members of each kind's sorted set whose deadline is <= now, at most that kind's limit, and moves
  their score to now + lease. A claimer that dies mid-transition thereby gives its timers back when
  the lease runs out; one that succeeds removes them (ZREM) after its commit. Claim and lease happen
  in one atomic step: no window in which a popped member lives only in a worker's memory.

  The removals may ride on the shard's next claim: a sweep acknowledges the timers its closers
  finished since its last claim of the shard in the same call, before claiming, instead of one ZREM
  round trip per shard after each commit. A removal is unconditional (the order is final in the
  database, so no timer of it is due any more) and idempotent.

  Each kind has its own key and limit, so a burst of one kind (coupons all valid until midnight)
  cannot take the claims of another (payment timeouts due in the same second).

  Input:
    KEYS[i]  timers of kind i, ZSET  member = "<code>:<id>" (the bare order id for the payment
             timeout), score = deadline epoch ms (lease expiry once claimed); all in one shard's slot
    ARGV[1]  now      epoch ms of the one clock all workers share (Redis TIME, read by the caller)
    ARGV[2]  lease    ms a claim stays invisible to other claimers
    ARGV[2+i] limit   max members of kind i claimed in this call (0: only its removals)
    then, optional, for each key i in order: a count c_i and c_i members to remove from it before
    the claim (the acknowledgements); no arguments after the limits: nothing is removed
  Output:
    array with one array per key: its claimed members, oldest deadline first; then one more element
    per key: the earliest score left in it after the claim (a deadline or a lease expiry) as a
    string, or "" when it is empty. The sweep learns each shard's next deadline from its claim this
    way (the lowest over the shard's keys) instead of reading it again in a second round trip (at
    3,333 due/s every pass claims every shard: 16 claims and 16 reads a pass before).

  Keys of several shards may go in one call where Redis is not a cluster (one node holds every
  shard; a cluster refuses keys of several slots in one script): each key is claimed on its own
  either way, and the caller groups the answers by shard.
]]
local rcall = redis.call
local now = tonumber(ARGV[1])
local leaseUntil = now + tonumber(ARGV[2])

local n = #KEYS
local at = 3 + n
for k = 1, n do
  local count = tonumber(ARGV[at] or "0")
  at = at + 1
  -- ZREM in chunks of 200 members (unpack's C stack, as below)
  for from = at, at + count - 1, 200 do
    rcall("ZREM", KEYS[k], unpack(ARGV, from, math.min(from + 199, at + count - 1)))
  end
  at = at + count
end

local claimed = {}
for k = 1, n do
  local limit = tonumber(ARGV[2 + k])
  local due = {}
  if limit > 0 then
    due = rcall("ZRANGEBYSCORE", KEYS[k], "-inf", now, "LIMIT", 0, limit)
  end
  -- ZADD in chunks of 200 members: unpack() of thousands of arguments can overflow Lua's C stack.
  local chunk = {}
  for i = 1, #due do
    chunk[#chunk + 1] = leaseUntil
    chunk[#chunk + 1] = due[i]
    if #chunk == 400 or i == #due then
      rcall("ZADD", KEYS[k], "XX", unpack(chunk))
      chunk = {}
    end
  end
  claimed[k] = due
end
for k = 1, n do
  local first = rcall("ZRANGE", KEYS[k], 0, 0, "WITHSCORES")
  claimed[n + k] = #first == 2 and string.format("%.0f", tonumber(first[2])) or ""
end
return claimed

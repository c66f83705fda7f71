--[[
  The registry of live sweeper runs, so that each takes an even share of the timer shards: before,
  the first sweeper to refresh took every free shard and kept them (ScaleOutBench: 2 processes on
  64 shards split 64/0, the second made empty passes), so more sweepers never closed more.

  Input:
    KEYS[1]  the registry, ZSET  member = a run's lease token, score = its expiry (epoch ms)
    ARGV[1]  token
    ARGV[2]  ttl      ms the entry lives without a renewal (the shard lease's duration)
    ARGV[3]  "1" to join or renew, "0" to leave
  Output:
    the tokens of the runs live after the call (expired entries are dropped first)
  Redis TIME, not the caller's clock: every sweeper then ages the entries by the same clock.
]]
local rcall = redis.call
local t = rcall("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
rcall("ZREMRANGEBYSCORE", KEYS[1], "-inf", now)
if ARGV[3] == "1" then
  rcall("ZADD", KEYS[1], now + ttl, ARGV[1])
  rcall("PEXPIRE", KEYS[1], ttl)
else
  rcall("ZREM", KEYS[1], ARGV[1])
end
return rcall("ZRANGE", KEYS[1], 0, -1)

--[[
  Takes or renews an exclusive lease (one sweeper per timer shard). The holder renews its own lease; anyone
  else gets it only after it expired or was released.

  Input:
    KEYS[1] lease    STRING  holder token, with a TTL
    ARGV[1] token    the caller's unique token
    ARGV[2] ttl      ms the lease lasts unless renewed
  Output:
    1 the caller holds the lease now, 0 someone else does
]]
local rcall = redis.call
local leaseKey = KEYS[1]
local token = ARGV[1]
local ttl = tonumber(ARGV[2])

local holder = rcall("GET", leaseKey)
if holder == token then
  rcall("PEXPIRE", leaseKey, ttl)
  return 1
end
if holder then
  return 0
end
rcall("SET", leaseKey, token, "PX", ttl)
return 1

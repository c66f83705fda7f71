--[[
  Releases a lease or lock only if the caller still holds it (compare-and-delete), so a holder whose lease
  already expired can never delete its successor's.

  Input:
    KEYS[1] lease    STRING  holder token
    ARGV[1] token    the caller's token
  Output:
    1 released, 0 not held by the caller (expired or taken over)
]]
local rcall = redis.call
local leaseKey = KEYS[1]
local token = ARGV[1]

if rcall("GET", leaseKey) == token then
  return rcall("DEL", leaseKey)
end
return 0

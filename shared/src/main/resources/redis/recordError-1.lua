--[[
  Appends one error to a stream entry's error history and returns the whole history, oldest first.
  The history is bounded (the newest entries are kept) and expires, so an entry that leaves the
  stream without being acknowledged (trimmed) leaves nothing behind for long.

  Input:
    KEYS[1] history  LIST    error strings of one stream entry
    ARGV[1] error    the error to append
    ARGV[2] keep     how many of the newest errors to keep
    ARGV[3] ttl      ms the history lives after its last error
  Output:
    the history after the append
]]
local rcall = redis.call
local historyKey = KEYS[1]
local errorText = ARGV[1]
local keep = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])

rcall("RPUSH", historyKey, errorText)
rcall("LTRIM", historyKey, -keep, -1)
rcall("PEXPIRE", historyKey, ttl)
return rcall("LRANGE", historyKey, 0, -1)

--[[
  Appends events to the order event stream in one round trip, trimming it approximately to a bound.

  Input:
    KEYS[1] stream   STREAM  the order event stream, field "e" = the event document
    ARGV[1] maxLen   approximate length bound (MAXLEN ~): Redis trims whole macro nodes
    ARGV[2..] event  JSON documents, appended in order
  Output:
    the entry ids, in the order of the events
]]
local rcall = redis.call
local streamKey = KEYS[1]
local maxLen = ARGV[1]

local ids = {}
for i = 2, #ARGV do
  ids[#ids + 1] = rcall("XADD", streamKey, "MAXLEN", "~", maxLen, "*", "e", ARGV[i])
end
return ids

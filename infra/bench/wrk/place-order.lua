-- wrk script for the order API: every request is a POST /orders placement with a
-- unique orderId, so none is answered as an idempotent retry.
-- orderId = "w" .. RUN_ID (6 digits, set one per wrk run) .. thread (2) .. counter (8): 17 chars,
-- within out_trade_no's 6-32. One item of a random SKU of the local catalog (sku-0000..0199, 10,000
-- each), a random user-0000..0499, no coupon, timeoutSeconds TIMEOUT_S (default 900, so nothing
-- expires during a run; the busy scenario sets a few seconds so orders expire while it places).
-- PAY_EVERY N (busy scenario; 0, the default, for none): of every N orders a thread places, the one
-- whose counter is a multiple of N is appended, once the API answered 201, to
-- PAY_DIR/pay-<thread>.txt, where BusyPayer picks it up to prepay and pay it as a user would.
local run = os.getenv("RUN_ID") or string.format("%06d", os.time() % 1000000)
local timeout = tonumber(os.getenv("TIMEOUT_S") or "900")
local pay_every = tonumber(os.getenv("PAY_EVERY") or "0")
local pay_dir = os.getenv("PAY_DIR") or "."
local next_tid = 0
local counter = 0
local pay_file = nil

function setup(thread)
  next_tid = next_tid + 1
  thread:set("tid", next_tid)
end

function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
  if pay_every > 0 then
    pay_file = assert(io.open(string.format("%s/pay-%02d.txt", pay_dir, tid or 0), "w"))
  end
end

-- defined only when paying: a response() callback makes wrk hand every body to Lua
if pay_every > 0 then
  function response(status, headers, body)
    if status ~= 201 then
      return
    end
    local id = string.match(body, '"orderId":"(w%d+)"')
    if id and tonumber(string.sub(id, -8)) % pay_every == 0 then
      pay_file:write(id, "\n")
      pay_file:flush()
    end
  end
end

function request()
  counter = counter + 1
  local body = string.format(
    '{"orderId":"w%s%02d%08d","userId":"user-%04d","items":[{"skuId":"sku-%04d","quantity":1}],'
      .. '"amountFen":100,"timeoutSeconds":%d}',
    run, tid or 0, counter, math.random(0, 499), math.random(0, 199), timeout)
  return wrk.format("POST", "/orders", { ["Content-Type"] = "application/json" }, body)
end

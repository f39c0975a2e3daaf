-- wrk script: JSON-RPC SendMessage with a fresh messageId per request (the cross-check
-- of benches/README.md): wrk -t1 -c32 -d5s -s benches/external/wrk/send.lua http://127.0.0.1:PORT/
local n = 0
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["a2a-version"] = "1.0"
request = function()
  n = n + 1
  local body = '{"jsonrpc":"2.0","id":' .. n .. ',"method":"SendMessage","params":{"message":{"messageId":"m-' .. n .. '-' .. math.random(1, 1000000000) .. '","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
  return wrk.format(nil, wrk.path, nil, body)
end

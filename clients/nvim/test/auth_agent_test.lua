-- Run by test/run.sh inside `nvim --headless -u NONE`, with the plugin on
-- 'runtimepath' and ISSUER, TEST_CONFIG, AUTH_AGENT_BIN, SCHEMA, README, ECHO_AGENT set.
-- Drives the real agent against the dev issuer. Every wait is bounded.
local env = vim.env
local issuer = env.ISSUER
local passed, failed = 0, 0

local function out(line)
  io.stdout:write(line, "\n")
  io.stdout:flush()
end

local function test(name, fn)
  local ok, err = pcall(fn)
  if ok then
    passed = passed + 1
    out("ok   " .. name)
  else
    failed = failed + 1
    out("FAIL " .. name .. ": " .. tostring(err))
  end
end

local function eq(actual, expected, what)
  if actual ~= expected then
    error(("%s: expected %s, got %s"):format(what, vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

local function wait_for(what, cond, ms)
  if not vim.wait(ms or 5000, cond, 10) then
    error("timed out waiting for " .. what, 2)
  end
end

local function admin(path, body)
  vim.fn.system({ "curl", "-sf", "-X", "POST", "-d", body, issuer .. "/_admin/" .. path })
  assert(vim.v.shell_error == 0, "admin " .. path .. " failed")
end

local function read_file(path)
  local f = assert(io.open(path, "r"))
  local text = f:read("*a")
  f:close()
  return text
end

-- Records what the user would have seen.
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end
local function noted(text)
  for _, n in ipairs(notes) do
    if n.msg:find(text, 1, true) then
      return n
    end
  end
end

local fired = {}
for _, pattern in ipairs({ "AuthAgentLoggedIn", "AuthAgentLoggedOut", "AuthAgentTokenRefreshed", "AuthAgentLoginPrompt" }) do
  vim.api.nvim_create_autocmd("User", {
    pattern = pattern,
    callback = function()
      table.insert(fired, { pattern = pattern, data = require("auth_agent").last_event.data })
    end,
  })
end
local function fired_with(pattern, key, value)
  for _, f in ipairs(fired) do
    if f.pattern == pattern and (key == nil or f.data[key] == value) then
      return f
    end
  end
end

vim.cmd("runtime! plugin/auth_agent.lua")
local auth = require("auth_agent")
local names = require("auth_agent.names")
local ui = require("auth_agent.ui")
local alice = { username = "alice", password = "wonderland" }

-- Calls an async API function and waits for its callback's (err, result, ...).
local function await(fn, ...)
  local n, args, done, res = select("#", ...), { ... }, false, nil
  args[n + 1] = function(...)
    done, res = true, { n = select("#", ...), ... }
  end
  fn(unpack(args, 1, n + 1))
  wait_for("a callback", function()
    return done
  end, 10000)
  return unpack(res, 1, res.n)
end

test("every schema method, notification and error is in names.lua", function()
  local schema = vim.json.decode(read_file(env.SCHEMA))
  for _, m in ipairs(schema.methods) do
    eq(names.methods[m.name], m["x-notification"] and "notification" or "request", "method " .. m.name)
  end
  for _, n in ipairs(schema["x-notifications"]) do
    assert(names.events[n.name], "notification " .. n.name .. " is missing")
  end
  for _, e in pairs(schema.components.errors) do
    eq(names.errors[e.code], e.data.reason, "error " .. e.code)
  end
  for _, r in ipairs(schema["x-host-requests"]) do
    assert(names.agent_requests[r.name], "agent request " .. r.name .. " is missing")
  end
end)

test("user commands are defined", function()
  for _, cmd in ipairs({ "AuthAgentLogin", "AuthAgentLogout", "AuthAgentStatus", "AuthAgentAccount",
    "AuthAgentDefaultAccount", "AuthAgentForget", "AuthAgentCompleteLogin" }) do
    eq(vim.fn.exists(":" .. cmd), 2, cmd)
  end
end)

test("setup starts the agent and subscribes", function()
  assert(auth.setup({ bin = env.AUTH_AGENT_BIN, config = env.TEST_CONFIG }), "setup failed")
  wait_for("subscribe's status", function()
    return #auth.providers > 0
  end)
  eq(auth.providers[1].id, "corp", "provider")
end)

test("complete_login naming no waiting login is -32602; the command asks for the URL", function()
  local err = await(auth.complete_login, "nope", "http://127.0.0.1:1/callback?code=x&state=y")
  eq(err.code, -32602, "code")
  assert(err.message:find("no browser login waits", 1, true), err.message)
  local input = vim.ui.input
  local asked
  vim.ui.input = function(opts, on_confirm)
    asked = opts.prompt
    on_confirm("http://127.0.0.1:1/callback?code=x&state=y")
  end
  auth.last_browser_login = "nope"
  vim.cmd("AuthAgentCompleteLogin")
  vim.ui.input = input
  assert(asked and asked:find("callback", 1, true), "vim.ui.input asked for the URL")
  auth.last_browser_login = nil
end)

test("login with credentials fires AuthAgentLoggedIn", function()
  local err, result = await(auth.login, "corp", alice)
  eq(err, nil, "error")
  eq(result.user.preferred_username, "alice", "user")
  wait_for("AuthAgentLoggedIn", function()
    return fired_with("AuthAgentLoggedIn", "provider", "corp")
  end)
  eq(auth.providers[1].state, "loggedIn", "cached state")
end)

test("login takes { provider, flow }; status lists the flows", function()
  local err, result = await(auth.login, { provider = "corp", flow = "password" }, alice)
  eq(err, nil, "error")
  eq(result.account, "alice", "account")
  eq(auth.providers[1].flow, "password", "default flow")
  eq(vim.inspect(auth.providers[1].flows), vim.inspect({ "password" }), "flows")
end)

test("sign gives headers that the server accepts", function()
  local err, headers = await(auth.sign, { url = issuer .. "/userinfo" })
  eq(err, nil, "error")
  assert(headers.Authorization:match("^Bearer "), "no bearer token")
  local me = vim.fn.system({ "curl", "-sf", "-H", "@-", issuer .. "/userinfo" },
    "Authorization: " .. headers.Authorization .. "\n")
  eq(vim.json.decode(me).sub, "alice", "userinfo")
end)

test("sign_sync: signed, unsigned and an unknown provider", function()
  local headers, err = auth.sign_sync({ method = "POST", url = issuer .. "/x", headers = {} })
  eq(err, nil, "error")
  assert(headers.Authorization, "not signed")
  headers, err = auth.sign_sync({ url = "https://unrelated.example.org/" })
  eq(err, nil, "error")
  eq(next(headers), nil, "headers for an uncovered URL")
  headers, err = auth.sign_sync({ url = issuer .. "/", provider = "ghost" })
  eq(headers, nil, "headers")
  eq(err.code, 1002, "code")
  eq(err.data.reason, "unknownProvider", "reason")
end)

test("proactive refresh fires AuthAgentTokenRefreshed", function()
  admin("fault", '{"accessTokenLifetime":0}')
  await(auth.login, "corp", alice)
  admin("fault", '{"accessTokenLifetime":3600}')
  local _, err = auth.sign_sync({ url = issuer .. "/userinfo" })
  eq(err, nil, "sign error")
  wait_for("AuthAgentTokenRefreshed", function()
    return fired_with("AuthAgentTokenRefreshed", "provider", "corp")
  end)
end)

test("a bad password is error 1003 and keeps the session", function()
  local err = await(auth.login, "corp", { username = "alice", password = "nope" })
  eq(err.code, 1003, "code")
  eq(err.data.reason, "invalidCredentials", "reason")
  eq(err.data.retryable, false, "retryable")
  eq(auth.providers[1].state, "loggedIn", "state")
end)

test("invalid params get a reason from the table", function()
  local _, err = auth.request_sync("sign", { request = { url = "x" } })
  eq(err.code, -32602, "code")
  eq(err.data.reason, "invalidParams", "reason")
end)

test("logout fires AuthAgentLoggedOut with reason logout", function()
  local err = await(auth.logout, "corp")
  eq(err, nil, "error")
  wait_for("AuthAgentLoggedOut", function()
    return fired_with("AuthAgentLoggedOut", "reason", "logout")
  end)
  eq(auth.last_event.data.provider, "corp", "last_event")
end)

test("server-side logout: 1004, AuthAgentLoggedOut(expired) and a warning", function()
  await(auth.login, "corp", alice)
  admin("fault", '{"revokeAll":true}')
  local err = await(auth.refresh, "corp", nil)
  eq(err.code, 1004, "code")
  wait_for("AuthAgentLoggedOut(expired)", function()
    return fired_with("AuthAgentLoggedOut", "reason", "expired")
  end)
  local note = noted("Logged out of Corp (expired)")
  assert(note and note.level == vim.log.levels.WARN, "no warning shown")
end)

test("a device-code loginPrompt shows notify and a floating window", function()
  auth.handle_line(vim.json.encode({
    jsonrpc = "2.0",
    method = "loginPrompt",
    params = { provider = "corp", requestId = "r1", userCode = "WDJB-MJHT",
      verificationUri = "https://example.com/device", expiresAt = "2030-01-01T00:00:00Z" },
  }))
  assert(noted("WDJB-MJHT"), "no notification with the code")
  local win = ui.prompts.corp
  assert(win and vim.api.nvim_win_is_valid(win), "no window")
  eq(vim.api.nvim_win_get_config(win).relative, "editor", "floating")
  local text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), "\n")
  assert(text:find("WDJB-MJHT", 1, true) and text:find("https://example.com/device", 1, true), text)
  assert(fired_with("AuthAgentLoginPrompt", "requestId", "r1"), "no autocmd")
end)

test("the login ending closes the prompt window", function()
  local win = ui.prompts.corp
  await(auth.login, "corp", alice)
  assert(not vim.api.nvim_win_is_valid(win), "window still open")
end)

test("a browser loginPrompt shows the URL", function()
  auth.handle_line('{"jsonrpc":"2.0","method":"loginPrompt","params":{"provider":"corp","requestId":"r2",'
    .. '"url":"https://example.com/authorize?x=1","expiresAt":"2030-01-01T00:00:00Z"}}')
  assert(noted("Open:    https://example.com/authorize?x=1"), "no URL shown")
  ui.close_login_prompt("corp")
end)

test("unknown notifications and non-JSON lines are ignored", function()
  local before = auth.last_event
  auth.handle_line('{"jsonrpc":"2.0","method":"somethingNew","params":{"x":1}}')
  auth.handle_line("not json")
  eq(auth.last_event, before, "last_event")
end)

test(":AuthAgentLogin asks for the fields (password unechoed) and logs in", function()
  await(auth.logout, "corp")
  local asked = {}
  local input, inputsecret = vim.fn.input, vim.fn.inputsecret
  vim.fn.input = function(prompt)
    table.insert(asked, "input " .. prompt)
    return "alice"
  end
  vim.fn.inputsecret = function(prompt)
    table.insert(asked, "secret " .. prompt)
    return "wonderland"
  end
  local n = #fired
  vim.cmd("AuthAgentLogin corp")
  wait_for("AuthAgentLoggedIn", function()
    return #fired > n and fired[#fired].pattern == "AuthAgentLoggedIn"
  end)
  vim.fn.input, vim.fn.inputsecret = input, inputsecret
  eq(table.concat(asked, ", "), "input Username: , secret Password: ", "prompts")
end)

test(":AuthAgentStatus shows the providers", function()
  vim.cmd("AuthAgentStatus")
  wait_for("the status message", function()
    return noted("loggedIn as alice")
  end)
end)

test("a sync call that times out is cancelled; the late answer is ignored", function()
  admin("fault", '{"latencyMs":1500}')
  local result, err = auth.request_sync("refresh", { provider = "corp" }, 300)
  eq(result, nil, "result")
  eq(err.data.reason, "timeout", "reason")
  local pong = auth.request_sync("ping", nil, 5000)
  eq(vim.json.encode(pong), "{}", "ping")
end)

test("the agent dying mid-request fails the pending callback", function()
  admin("fault", '{"latencyMs":3000}')
  local done, got = false, nil
  auth.refresh("corp", nil, function(err)
    done, got = true, err
  end)
  vim.wait(300)
  vim.loop.kill(auth.client:pid(), 9)
  wait_for("the pending callback", function()
    return done
  end, 2500)
  eq(got.data.reason, "agentExited", "reason")
  assert(got.message:find("before answering refresh", 1, true), got.message)
  assert(noted("auth-agent exited with status"), "the exit was not reported")
  local _, err = auth.sign_sync({ url = issuer .. "/" }, 1000)
  eq(err.data.reason, "notRunning", "afterwards")
  admin("fault", '{"latencyMs":0}')
end)

test("stop ends the agent", function()
  auth.setup({ bin = env.AUTH_AGENT_BIN, config = env.TEST_CONFIG })
  local pid = auth.client:pid()
  auth.stop()
  eq(auth.client, nil, "client")
  eq(vim.loop.kill(pid, 0), nil, "process still there")
end)

local function stats()
  return vim.json.decode(vim.fn.system({ "curl", "-sf", issuer .. "/_admin/stats" })).counts
end

-- A loopback port nobody listens on: bound, then released.
local function closed_port()
  local server = vim.loop.new_tcp()
  server:bind("127.0.0.1", 0)
  local port = server:getsockname().port
  server:close()
  return port
end

local function http(req)
  local err, res = await(auth.http, req)
  return err, res
end

test("http: signed, 200, a standard answer", function()
  admin("reset", "{}")
  auth.setup({ bin = env.AUTH_AGENT_BIN, config = env.TEST_CONFIG })
  await(auth.login, "corp", alice)
  local err, res = http({ url = issuer .. "/api/me" })
  eq(err, nil, "error")
  eq(res.status, 200, "status")
  eq(vim.json.decode(res.body).preferred_username, "alice", "user")
  assert(res.headers["content-type"]:find("application/json", 1, true), vim.inspect(res.headers))
  eq(res.signed, true, "signed")
  eq(res.provider, "corp", "provider")
  eq(res.retried, false, "retried")
end)

test("http: a 401 for the token sent refreshes once and retries: 200", function()
  admin("reset", "{}")
  admin("fault", '{"rejectApi":1}')
  local err, res = http({ url = issuer .. "/api/me" })
  eq(err, nil, "error")
  eq(res.status, 200, "status")
  eq(res.retried, true, "retried")
  eq(vim.json.decode(res.body).preferred_username, "alice", "user")
  local counts = stats()
  eq(counts["token.refresh_token"], 1, "refreshes")
  eq(counts.api, 2, "API calls")
end)

test("http: a second 401 is the answer, without a loop", function()
  admin("reset", "{}")
  admin("fault", '{"rejectApi":5}')
  local err, res = http({ url = issuer .. "/api/me" })
  eq(err, nil, "error")
  eq(res.status, 401, "status")
  eq(res.retried, true, "retried")
  assert(res.headers["www-authenticate"]:find("invalid_token", 1, true), vim.inspect(res.headers))
  eq(stats().api, 2, "API calls")
  admin("reset", "{}")
end)

test("http: method, headers and body reach the server; binary bodies arrive whole", function()
  local body = vim.json.encode({ name = "Grüße" })
  local err, res = http({ url = issuer .. "/api/echo", method = "POST",
    headers = { ["Content-Type"] = "application/json" }, body = body })
  eq(err, nil, "error")
  local echo = vim.json.decode(res.body)
  eq(echo.method .. " " .. echo.contentType .. " " .. echo.body, "POST application/json " .. body, "echo")
  err, res = http({ url = issuer .. "/api/bytes?n=3000" })
  eq(err, nil, "error")
  eq(#res.body, 3000, "bytes")
  eq(res.body, string.rep("a", 3000), "content")
end)

test("http: the token goes to curl through stdin, never in its arguments", function()
  local jobstart, argv = vim.fn.jobstart, {}
  vim.fn.jobstart = function(cmd, opts)
    if type(cmd) == "table" and cmd[1] == "curl" then
      argv = cmd
    end
    return jobstart(cmd, opts)
  end
  local ok, err, res = pcall(http, { url = issuer .. "/api/me" })
  vim.fn.jobstart = jobstart
  assert(ok, err)
  eq(res.status, 200, "status")
  assert(#argv > 0, "curl was not run through jobstart")
  local token = auth.request_sync("token", { provider = "corp" }).accessToken
  for _, arg in ipairs(argv) do
    assert(not arg:find(token, 1, true) and not arg:find("Bearer", 1, true), "token in argv: " .. arg)
  end
end)

test("http: through vim.system where Neovim has it", function()
  -- 0.7 has no vim.system: a stand-in with its interface, on jobstart.
  local used = false
  vim.system = function(cmd, opts, on_exit)
    used = true
    local stderr = {}
    local job = vim.fn.jobstart(cmd, {
      stderr_buffered = true,
      on_stderr = function(_, data) stderr = data end,
      on_exit = function(_, code) on_exit({ code = code, signal = 0, stdout = "", stderr = table.concat(stderr, "\n") }) end,
    })
    vim.fn.chansend(job, opts.stdin)
    vim.fn.chanclose(job, "stdin")
  end
  local ok, err, res = pcall(http, { url = issuer .. "/api/me" })
  vim.system = nil
  assert(ok, err)
  eq(err, nil, "error")
  eq(res.status, 200, "status")
  assert(used, "vim.system was not used")
end)

test("http: an uncovered URL is sent unsigned", function()
  local err, res = http({ url = (issuer .. "/api/me"):gsub("127%.0%.0%.1", "localhost") })
  eq(err, nil, "error")
  eq(res.status, 401, "status")
  eq(res.signed, false, "signed")
  eq(res.retried, false, "retried")
end)

test("http: an unreachable server is requestFailed, retryable", function()
  local err, res = http({ url = ("http://127.0.0.1:%d/"):format(closed_port()) })
  eq(res, nil, "response")
  eq(err.data.reason, "requestFailed", "reason")
  eq(err.data.retryable, true, "retryable")
  assert(err.message:find("curl", 1, true), err.message)
end)

test("http: a slow server past timeout_ms is requestFailed", function()
  admin("fault", '{"latencyMs":3000}')
  local err = http({ url = issuer .. "/api/me", timeout_ms = 500 })
  admin("fault", '{"latencyMs":0}')
  eq(err.data.reason, "requestFailed", "reason")
end)

test("http: a header with a line break is refused; not logged in is 1001", function()
  local err = http({ url = issuer .. "/api/me", headers = { ["X-Evil"] = "a\r\nInjected: 1" } })
  eq(err.data.reason, "invalidParams", "reason")
  await(auth.logout, "corp")
  err = http({ url = issuer .. "/api/me" })
  eq(err.code, 1001, "code")
  eq(err.data.reason, "notLoggedIn", "reason")
end)

test(":AuthAgentLogin with a provider logs in without claiming it is unknown", function()
  notes = {}
  local input, inputsecret = vim.fn.input, vim.fn.inputsecret
  vim.fn.input = function() return "alice" end
  vim.fn.inputsecret = function() return "wonderland" end
  local n = #fired
  vim.cmd("AuthAgentLogin corp")
  wait_for("AuthAgentLoggedIn", function()
    return #fired > n and fired[#fired].pattern == "AuthAgentLoggedIn"
  end)
  vim.wait(100)
  vim.fn.input, vim.fn.inputsecret = input, inputsecret
  eq(noted("No provider"), nil, "error message")
  vim.cmd("AuthAgentLogin ghost")
  wait_for("the unknown provider's message", function()
    return noted("No provider ghost")
  end)
end)

-- Accounts and shaped tokens. The provider's login asks for the scopes read and write.
local bob = { username = "bob", password = "builder" }
local me_url = issuer .. "/api/me"

-- The claims of one of the dev issuer's JWT access tokens (0.7 has no vim.base64).
local function claims(token)
  local payload = token:gsub("^Bearer ", ""):match("^[^.]+%.([^.]+)"):gsub("-", "+"):gsub("_", "/")
  payload = payload .. string.rep("=", (4 - #payload % 4) % 4)
  return vim.json.decode(vim.fn.system({ "base64", "-d" }, payload))
end

local function who(req)
  local err, res = http(vim.tbl_extend("keep", req or {}, { url = me_url }))
  eq(err, nil, "error")
  eq(res.status, 200, "status")
  return vim.json.decode(res.body).preferred_username, res
end

local function account_ids()
  local p = auth.providers[1]
  local ids = vim.tbl_map(function(a)
    return a.id .. (a.default and "*" or "")
  end, p.accounts or {})
  table.sort(ids)
  return table.concat(ids, " ")
end

test("accounts: a second user's login adds an account; status and the cache list both", function()
  admin("reset", "{}")
  auth.setup({ bin = env.AUTH_AGENT_BIN, config = env.TEST_CONFIG })
  local _, first = await(auth.login, "corp", alice)
  local _, second = await(auth.login, "corp", bob)
  eq(first.account .. " " .. second.account, "alice bob", "accounts")
  wait_for("AuthAgentLoggedIn for bob", function()
    return fired_with("AuthAgentLoggedIn", "account", "bob")
  end)
  wait_for("the cached accounts", function()
    return account_ids() == "alice* bob"
  end)
  eq(auth.providers[1].account, "alice", "this editor's account")
  eq(auth.providers[1].user.preferred_username, "alice", "the cached user stays this editor's")
end)

test("accounts: the account field of sign, http and token picks whose token", function()
  eq(who(), "alice", "default")
  eq(who({ account = "bob" }), "bob", "named")
  local headers = auth.sign_sync({ url = me_url, account = "bob" })
  eq(claims(headers.Authorization).sub, "bob", "sign_sync")
  local err, token = await(auth.token, { provider = "corp", account = "bob" })
  eq(err, nil, "token error")
  eq(claims(token.accessToken).sub, "bob", "token")
end)

test("accounts: http after a 401 refreshes and resends as the same account", function()
  admin("reset", "{}")
  admin("fault", '{"rejectApi":1}')
  local user, res = who({ account = "bob" })
  eq(user, "bob", "user")
  eq(res.retried, true, "retried")
  eq(stats()["token.refresh_token"], 1, "refreshes")
  local grants = vim.json.decode(vim.fn.system({ "curl", "-sf", issuer .. "/_admin/grants" })).grants
  eq(grants["refresh_token:bob"], 1, "bob's refreshes")
end)

test("shapes: scopes narrow the token; with() pins an account and a shape", function()
  local plain = auth.sign_sync({ url = me_url })
  local narrow = auth.sign_sync({ url = me_url, scopes = { "read" } })
  eq(claims(plain.Authorization).scope, "read write", "plain scope")
  eq(claims(narrow.Authorization).scope, "read", "narrow scope")
  local as_bob = auth.with({ account = "bob", scopes = { "read" } })
  local headers = as_bob.sign_sync({ url = me_url })
  eq(claims(headers.Authorization).sub .. " " .. claims(headers.Authorization).scope, "bob read", "with().sign_sync")
  local err, res = await(as_bob.http, { url = me_url })
  eq(err, nil, "with().http error")
  eq(vim.json.decode(res.body).preferred_username, "bob", "with().http")
  local _, token = await(as_bob.token, "corp")
  eq(token.accessToken, headers.Authorization:gsub("^Bearer ", ""), "with().token")
  eq(who({ account = "alice", scopes = { "read" } }), "alice", "a request's own field wins")
  local _, token_alice = await(as_bob.token, { provider = "corp", account = "alice" })
  eq(claims(token_alice.accessToken).sub, "alice", "with().token's own field wins")
end)

test("shapes: a scope the server refuses is 1013 scopeNotGranted; the login stays", function()
  local err = http({ url = me_url, scopes = { "admin" } })
  eq(err.code, 1013, "code")
  eq(err.data.reason, names.errors[1013], "reason")
  eq(err.data.reason, "scopeNotGranted", "reason name")
  eq(err.data.retryable, false, "retryable")
  local headers, sign_err = auth.sign_sync({ url = me_url, scopes = { "admin" } })
  eq(headers, nil, "headers")
  eq(sign_err.code, 1013, "sign_sync code")
  eq(who(), "alice", "still logged in")
end)

test("shapes: two resources and an audience are three tokens; an unknown resource is 1013", function()
  -- A fresh agent: more refreshes on the one before would trip its refresh limit.
  auth.setup({ bin = env.AUTH_AGENT_BIN, config = env.TEST_CONFIG })
  await(auth.login, "corp", alice)
  await(auth.login, "corp", bob)
  -- The issuer's /api/token describes the token it was sent.
  local function described(req)
    local err, res = http(vim.tbl_extend("keep", req, { url = issuer .. "/api/token" }))
    eq(err, nil, "error")
    local d = vim.json.decode(res.body)
    return ("%s %s %s"):format(d.sub, d.resource or "-", d.audience or "-")
  end
  eq(described({ resource = issuer .. "/api" }), "alice " .. issuer .. "/api -", "its own API")
  eq(described({ resource = "https://files.example.com" }), "alice https://files.example.com -", "files")
  eq(described({ audience = "files", account = "bob" }), "bob - files", "an audience")
  eq(described({}), "alice - -", "no shape")
  local err = http({ url = me_url, resource = "https://unknown.example.com" })
  eq(err.code, 1013, "code")
  assert(err.message:find("unknown resource", 1, true), err.message)
end)

test(":AuthAgentAccount chooses this editor's account; select_account(nil) goes back", function()
  notes = {}
  vim.cmd("AuthAgentAccount corp bob")
  wait_for("the selection's message", function()
    return noted("Corp: this editor uses bob")
  end)
  eq(who(), "bob", "selected")
  wait_for("the cached account", function()
    return auth.providers[1].account == "bob"
  end)
  vim.cmd("AuthAgentStatus")
  wait_for("the status with accounts", function()
    return noted("account bob: bob (this editor)") and noted("account alice: alice (default)")
  end)
  local err, result = await(auth.select_account, "corp", nil)
  eq(err, nil, "error")
  eq(result.provider .. " " .. tostring(result.account), "corp nil", "result")
  eq(who(), "alice", "back to the default")
  err = await(auth.select_account, "corp", "carol")
  eq(err.code, 1001, "an account not logged in")
end)

test(":AuthAgentDefaultAccount sets the provider's default", function()
  notes = {}
  vim.cmd("AuthAgentDefaultAccount corp bob")
  wait_for("the message", function()
    return noted("Corp: the default account is bob")
  end)
  eq(who(), "bob", "the default")
  wait_for("the cached default", function()
    return account_ids() == "alice bob*"
  end)
end)

test(":AuthAgentLogout corp alice logs out one account; :AuthAgentLogout! corp every one", function()
  vim.cmd("AuthAgentLogout corp alice")
  wait_for("AuthAgentLoggedOut for alice", function()
    return fired_with("AuthAgentLoggedOut", "account", "alice")
  end)
  wait_for("the cached accounts", function()
    return account_ids() == "bob*"
  end)
  await(auth.login, "corp", alice)
  local n = #fired
  vim.cmd("AuthAgentLogout! corp")
  wait_for("AuthAgentLoggedOut for both", function()
    local accounts = {}
    for i = n + 1, #fired do
      if fired[i].pattern == "AuthAgentLoggedOut" then
        accounts[fired[i].data.account] = true
      end
    end
    return accounts.alice and accounts.bob
  end)
  wait_for("the cached state", function()
    return auth.providers[1].state == "loggedOut" and account_ids() == ""
  end)
end)

test(":checkhealth auth_agent reports the binary and the running agent", function()
  vim.cmd("checkhealth auth_agent")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  assert(text:find("binary: " .. env.AUTH_AGENT_BIN, 1, true), text)
  assert(text:find("answers ping", 1, true), text)
  assert(text:find("curl found", 1, true), text)
  assert(not text:find("ERROR", 1, true), text)
end)

test("doc/tags is shipped and current; :help auth_agent opens", function()
  local doc = vim.fn.fnamemodify(env.README, ":h") .. "/doc"
  local copy = vim.fn.tempname()
  vim.fn.mkdir(copy, "p")
  vim.fn.writefile(vim.fn.readfile(doc .. "/auth_agent.txt"), copy .. "/auth_agent.txt")
  vim.cmd("helptags " .. vim.fn.fnameescape(copy))
  eq(read_file(doc .. "/tags"), read_file(copy .. "/tags"), "doc/tags (run :helptags clients/nvim/doc)")
  vim.fn.delete(copy, "rf")
  vim.cmd("help auth_agent.http()")
  assert(vim.fn.expand("%:t") == "auth_agent.txt", "help opened " .. vim.fn.expand("%"))
  assert(vim.api.nvim_get_current_line():find("*auth_agent.http()*", 1, true), vim.api.nvim_get_current_line())
  vim.cmd("helpclose")
end)

test("quitting Neovim stops the agent without a message", function()
  local plugin = vim.fn.fnamemodify(env.README, ":h")
  local setup = ("lua require('auth_agent').setup({ bin = %q, config = %q })"):format(env.AUTH_AGENT_BIN, env.TEST_CONFIG)
  -- system() returns the child's stderr too, where headless Neovim writes its messages.
  local output = vim.fn.system({ "timeout", "20", "nvim", "--headless", "-u", "NONE", "-i", "NONE",
    "--cmd", "set runtimepath^=" .. plugin, "-c", setup,
    "-c", "lua vim.wait(5000, function() return #require('auth_agent').providers > 0 end, 10)",
    "-c", "qa!" }, "")
  eq(vim.v.shell_error, 0, "exit status")
  eq(output, "", "messages")
end)

-- start(callback) makes one request; its answer { err, result }, waited for.
local function answer_of(start)
  local answer
  start(function(err, result)
    answer = { err = err, result = result }
  end)
  wait_for("an answer", function()
    return answer ~= nil
  end, 20000)
  return answer
end

-- The same, for a request that must succeed: its result.
local function call(start)
  local answer = answer_of(start)
  assert(not answer.err, vim.inspect(answer.err))
  return answer.result
end

test("login with a resource, fetch's login, forget: what they send (a stand-in agent)", function()
  if vim.fn.executable("python3") ~= 1 then
    return out("skip: python3 runs the stand-in agent (test/echo_agent.py)")
  end
  auth.stop()
  assert(auth.setup({ cmd = { "python3", env.ECHO_AGENT } }), "setup failed")
  local resource = "https://api.example.com/mcp"
  local learned = call(function(cb) auth.login(resource, nil, cb) end)
  eq(learned.provider, "api.example.com", "learned provider")
  eq(vim.inspect(learned.echo.params), vim.inspect({ resource = resource }), "login params")
  local device = call(function(cb) auth.login({ resource = resource, flow = "deviceCode", open_browser = false }, nil, cb) end)
  eq(vim.inspect(device.echo.params), vim.inspect({ flow = "deviceCode", openBrowser = false, resource = resource }), "params")
  eq(pcall(auth.login, {}, nil, function() end), false, "login without provider or resource")
  local hinted = call(function(cb) auth.fetch({ url = resource }, cb) end)
  eq(hinted.status, 401, "status")
  eq(hinted.login.resource, resource, "the login hint")
  local asked = call(function(cb) auth.fetch({ url = resource, login = "ifNeeded", open_browser = false }, cb) end)
  eq(asked.echo.params.login, "ifNeeded", "fetch's login")
  eq(asked.echo.params.openBrowser, false, "fetch's openBrowser")
  eq(asked.login, nil, "no hint when the agent may log in itself")
  local forgot = call(function(cb) auth.forget("api.example.com", cb) end)
  eq(forgot.forgotten, true, "forgotten")
  eq(forgot.echo.params.provider, "api.example.com", "forget's provider")
  auth.stop()
end)

test("the real agent learns the dev issuer's API: login URL, fetch, step-up, forget", function()
  auth.stop()
  local config = vim.fn.tempname()
  vim.fn.writefile({ '{"store":{"kind":"memory"}}' }, config)
  admin("fault", '{"autoApprove":"alice"}')
  assert(auth.setup({ bin = env.AUTH_AGENT_BIN, config = config }), "setup failed")
  -- Plays the browser: the issuer approves at once and redirects to the agent's listener.
  local group = vim.api.nvim_create_augroup("auth_agent_learn_test", { clear = true })
  vim.api.nvim_create_autocmd("User", { pattern = "AuthAgentLoginPrompt", group = group, callback = function()
    vim.fn.jobstart({ "curl", "-sfL", "-o", "/dev/null", auth.last_event.data.url })
  end })
  local resource = issuer .. "/mcp"
  local hinted = call(function(cb) auth.fetch({ url = resource }, cb) end)
  eq(hinted.status, 401, "status")
  eq(hinted.login.resource, resource, "the login hint")
  local login = call(function(cb) auth.login(resource, nil, cb) end)
  local me = call(function(cb) auth.fetch({ url = resource }, cb) end)
  eq(me.status, 200, "signed by the learned provider")
  eq(me.provider, login.provider, "provider")
  local stepped = call(function(cb) auth.fetch({ url = resource .. "/admin", login = "ifNeeded" }, cb) end)
  eq(stepped.status, 200, "step-up")
  eq(vim.fn.json_decode(stepped.body).scope, "mcp offline_access admin", "scope")
  eq(call(function(cb) auth.forget(login.provider, cb) end).forgotten, true, "forgotten")
  admin("fault", '{"discovery":"wrong-resource"}')
  local refused = answer_of(function(cb) auth.login(resource, nil, cb) end)
  eq(refused.err and refused.err.code, 1014, "discoveryFailed")
  eq(refused.err.data.step, "resourceMetadata", "step")
  admin("reset", "{}")
  vim.api.nvim_del_augroup_by_id(group)
  auth.stop()
  vim.fn.delete(config)
end)

test("with a socket agent, setup connects to it through a vim.loop pipe; without one it starts its own", function()
  local directory = vim.fn.tempname()
  vim.fn.mkdir(directory, "p")
  local path = directory .. "/run/agent.sock"
  local server = vim.fn.jobstart({ env.AUTH_AGENT_BIN, "serve", "--socket", path }, { env = { AUTH_AGENT_CONFIG = env.TEST_CONFIG } })
  wait_for("the socket", function()
    return vim.loop.fs_stat(path) ~= nil
  end)
  assert(auth.setup({ socket = path }), "setup failed")
  assert(auth.client.pipe ~= nil, "a socket connection")
  eq(auth.client:pid(), nil, "no child of ours")
  local err = await(auth.login, "corp", alice)
  eq(err, nil, "login through the socket")
  local other = require("auth_agent.rpc").connect(path, {}, 1000)
  local token = other:request_sync("token", { provider = "corp" }, 5000)
  assert(token and token.accessToken, "another connection shares the login")
  other:stop(2000)
  auth.stop()
  eq(vim.fn.jobwait({ server }, 0)[1], -1, "the agent still serves after this editor's connection ended")
  assert(auth.setup({ socket = path .. ".absent", bin = env.AUTH_AGENT_BIN, config = env.TEST_CONFIG }), "fallback setup failed")
  assert(noted("not using the agent at"), "a warning")
  assert(auth.client.pipe == nil and auth.client:pid(), "an agent of its own")
  auth.stop()
  vim.fn.jobstop(server)
end)

-- presentLogin (issue 34): the editor presents its logins.
test("agent->host requests are answered: -32601 without present_login or for unknown methods", function()
  auth.stop()
  assert(auth.setup({ bin = env.AUTH_AGENT_BIN, config = env.TEST_CONFIG }), "setup failed")
  local sent = {}
  local client = auth.client
  client._send = function(_, msg)
    table.insert(sent, msg)
  end
  auth.handle_line('{"jsonrpc":"2.0","id":"agent-7","method":"presentLogin","params":{"provider":"corp","kind":"browser"}}')
  auth.options.present_login = true
  auth.handle_line('{"jsonrpc":"2.0","id":"agent-8","method":"somethingNew","params":{}}')
  client._send = nil
  eq(#sent, 2, "answers")
  eq(sent[1].id, "agent-7", "id")
  eq(sent[1].error.code, -32601, "presentLogin without the option")
  eq(sent[2].error.code, -32601, "an unknown request")
  auth.stop()
end)

test("the login window counts down to expiresAt", function()
  local now = os.time()
  local at = os.date("!%Y-%m-%dT%H:%M:%SZ", now + 125)
  eq(ui.countdown(at, now), "Expires in 2:05", "countdown")
  eq(ui.countdown(os.date("!%Y-%m-%dT%H:%M:%SZ", now - 1), now), "Expired", "expired")
end)

local interactive = vim.fn.tempname()
vim.fn.writefile({ vim.json.encode({ store = { kind = "memory" }, providers = {
  { id = "web", displayName = "Web", flow = "authorizationCode", issuer = issuer, clientId = "cli", origins = { issuer } },
  { id = "device", displayName = "Device", flow = "deviceCode", issuer = issuer, clientId = "cli",
    origins = { (issuer:gsub("127%.0%.0%.1", "localhost")) } },
} }) }, interactive)

-- The fake opener is the person: a browser the issuer approves at once, or the device page approved as alice.
local opened = {}
local function fake_open(url)
  table.insert(opened, url)
  local code = url:match("user_code=([%w-]+)")
  if code then
    vim.fn.jobstart({ "curl", "-sf", "-o", "/dev/null", "--data-urlencode", "user_code=" .. code, "-d", "username=alice",
      "-d", "password=wonderland", "-d", "action=approve", (url:gsub("%?.*", "")) })
  else
    vim.fn.jobstart({ "curl", "-sfL", "-o", "/dev/null", url })
  end
  return {}
end
-- Where the issuer sends the browser: the address a person would paste.
local function redirect_of(url)
  return vim.fn.system({ "curl", "-s", "-o", "/dev/null", "-w", "%{redirect_url}", url })
end

local function with_presenting(options, body)
  auth.stop()
  admin("fault", '{"autoApprove":"alice","deviceInterval":1}')
  opened, fired = {}, {}
  local ui_open, ui_input = vim.ui.open, vim.ui.input
  local ok, err = pcall(function()
    assert(auth.setup(vim.tbl_extend("force", { bin = env.AUTH_AGENT_BIN, config = interactive }, options)), "setup failed")
    wait_for("subscribe's status", function()
      return #auth.providers > 0
    end)
    body()
  end)
  vim.ui.open, vim.ui.input = ui_open, ui_input
  auth.stop()
  admin("reset", "{}")
  assert(ok, err)
end

test("present_login: the URL is opened with vim.ui.open, the window counts down, the login completes", function()
  with_presenting({ present_login = true }, function()
    vim.ui.open = fake_open
    local shown
    local show = ui.show_login_prompt
    ui.show_login_prompt = function(...)
      show(...)
      local win = ui.prompts.web
      shown = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), "\n")
    end
    local answer = answer_of(function(cb) auth.login({ provider = "web", open_browser = false }, nil, cb) end)
    ui.show_login_prompt = show
    assert(not answer.err, vim.inspect(answer.err))
    eq(answer.result.user.sub, "alice", "user")
    eq(#opened, 1, "opened once")
    assert(opened[1]:find(issuer .. "/authorize", 1, true), opened[1])
    assert(shown and shown:find("Log in to Web", 1, true) and shown:find("Expires in %d+:%d%d"), tostring(shown))
    eq(fired_with("AuthAgentLoginPrompt"), nil, "no loginPrompt")
  end)
end)

test("present_login: a device code is shown and its page opened; the login completes", function()
  with_presenting({ present_login = true }, function()
    vim.ui.open = fake_open
    local answer = answer_of(function(cb) auth.login("device", nil, cb) end)
    assert(not answer.err, vim.inspect(answer.err))
    eq(answer.result.user.sub, "alice", "user")
    assert(opened[1] and opened[1]:find("user_code=", 1, true), vim.inspect(opened))
    eq(fired_with("AuthAgentLoginPrompt"), nil, "no loginPrompt")
  end)
end)

test("present_login = { paste = true }: the address pasted in vim.ui.input completes the login", function()
  with_presenting({ present_login = { paste = true } }, function()
    vim.ui.open = function(url)
      table.insert(opened, url) -- a browser elsewhere: it cannot reach the agent
      return {}
    end
    vim.ui.input = function(_, on_confirm)
      on_confirm(redirect_of(opened[#opened]))
    end
    local answer = answer_of(function(cb) auth.login({ provider = "web", open_browser = false }, nil, cb) end)
    assert(not answer.err, vim.inspect(answer.err))
    eq(answer.result.provider, "web", "provider")
    eq(fired_with("AuthAgentLoginPrompt"), nil, "no loginPrompt")
  end)
end)

test("present_login: Esc at the paste prompt cancels the login (-32800)", function()
  with_presenting({ present_login = { paste = true } }, function()
    vim.ui.open = function() return {} end
    vim.ui.input = function(_, on_confirm)
      on_confirm(nil)
    end
    local answer = answer_of(function(cb) auth.login({ provider = "web", open_browser = false }, nil, cb) end)
    eq(answer.err and answer.err.code, -32800, "requestCancelled")
  end)
end)

-- Starts a login to "web", waits (up to `ms`) for the agent's loginPrompt, runs `check`, plays the
-- browser on the prompt's URL, and waits for the login to succeed.
local function login_through_the_prompt(ms, check)
  local answer
  auth.login({ provider = "web", open_browser = false }, nil, function(err, result)
    answer = { err = err, result = result }
  end)
  wait_for("the loginPrompt", function()
    return fired_with("AuthAgentLoginPrompt") ~= nil
  end, ms)
  check()
  fake_open(fired_with("AuthAgentLoginPrompt").data.url)
  wait_for("the login", function()
    return answer ~= nil
  end, 20000)
  assert(not answer.err, vim.inspect(answer.err))
end

test("present_login: a person who does not answer within 10 s gets the agent's loginPrompt", function()
  with_presenting({ present_login = { paste = true } }, function()
    vim.ui.open = function() return {} end
    local asked_at
    vim.ui.input = function()
      asked_at = vim.loop.hrtime() -- and never answers
    end
    login_through_the_prompt(15000, function()
      local waited = (vim.loop.hrtime() - asked_at) / 1e9
      assert(waited > 8.5 and waited < 11.5, ("fell back after %.1f s"):format(waited))
    end)
  end)
end)

test("without present_login: the loginPrompt as before", function()
  with_presenting({}, function()
    vim.ui.open = fake_open
    login_through_the_prompt(5000, function()
      eq(#opened, 0, "nothing opened by the editor")
    end)
  end)
end)
vim.fn.delete(interactive)

test("the README's lazy.nvim spec runs as written against auth-agent demo", function()
  local readme = read_file(env.README)
  local code = readme:match("```lua\n(.-)```")
  local spec = assert(loadstring(code, "README example"))()
  -- What lazy.nvim reads of a local plugin spec, and how it calls config.
  eq(type(spec.dir), "string", "dir")
  eq(spec.name, "auth_agent", "name")
  eq(spec.lazy, false, "lazy")
  env.AUTH_AGENT_CONFIG = nil
  spec.config(spec, vim.deepcopy(spec.opts))
  wait_for("the example's agent", function()
    return #auth.providers > 0
  end)
  notes = {}
  local input, inputsecret = vim.fn.input, vim.fn.inputsecret
  vim.fn.input = function() return "alice" end
  vim.fn.inputsecret = function() return "wonderland" end
  vim.cmd("AuthAgentLogin demo")
  wait_for("the demo login", function()
    return noted("Logged in to Demo API as alice")
  end)
  vim.fn.input, vim.fn.inputsecret = input, inputsecret
  vim.cmd("WhoAmI")
  wait_for("the example's answer", function()
    return noted("200 alice")
  end)
  vim.cmd("AuthAgentLogout demo")
  wait_for("the example's logout message", function()
    return noted("Logged out of demo: logout")
  end)
  eq(noted("No provider"), nil, "error message")
  auth.stop()
end)

out(("%d passed, %d failed"):format(passed, failed))
if failed > 0 then
  vim.cmd("1cquit")
end
vim.cmd("qall!")

-- auth-agent for Neovim: one long-lived agent per editor; the editor never
-- sees passwords, refresh tokens or token endpoints, only request headers.
local http = require("auth_agent.http")
local names = require("auth_agent.names")
local rpc = require("auth_agent.rpc")
local ui = require("auth_agent.ui")

local M = {
  --- The last notification handled: { name = "userLoggedOut", data = params }.
  --- Autocmd callbacks read it on Neovim 0.7, whose autocmds carry no data.
  last_event = nil,
  --- Providers as `status` describes them, kept current by notifications.
  providers = {},
  client = nil,
}

local defaults = {
  cmd = nil, -- full command list; overrides bin/config/args
  bin = nil, -- else $AUTH_AGENT_BIN, else auth-agent on PATH
  config = nil, -- else the agent's default ($AUTH_AGENT_CONFIG, ...)
  args = {},
  providers = nil, -- subscribe to these provider ids only (default: all)
  events = { "userLoggedIn", "userLoggedOut", "tokenRefreshed", "providersChanged", "loginPrompt", "loginWaiting" },
  timeout_ms = 10000, -- sign_sync and the commands' waits
  notify_events = true, -- vim.notify on logins and logouts
  open_browser = false, -- open a loginPrompt's URL with xdg-open/open
  -- Present this editor's logins itself (presentLogin): the URL opened with vim.ui.open, the code
  -- in a float with a countdown. { paste = true }: also ask for the address a browser that cannot
  -- reach the agent ended at (vim.ui.input), e.g. when Neovim runs on another machine than the browser.
  present_login = false,
  socket = nil, -- the socket agent to use; else $AUTH_AGENT_SOCK; false: always start one
}
M.options = vim.deepcopy(defaults)

local autocmd_data = vim.fn.has("nvim-0.8") == 1

local function fire(pattern, data)
  local opts = { pattern = pattern, modeline = false }
  if autocmd_data then
    opts.data = data
  end
  vim.api.nvim_exec_autocmds("User", opts)
end

local function provider(id)
  for _, p in ipairs(M.providers) do
    if p.id == id then
      return p
    end
  end
end

local function display_name(id)
  local p = provider(id)
  return p and p.displayName or id
end

-- Whether an event concerns the account this editor's requests use: the
-- cached state describes that one only. Unknown on either side: assume so.
local function concerns_this_editor(p, params)
  return params.account == nil or p.account == nil or p.account == params.account
end

-- Keeps M.providers current, then tells the user and fires the autocmd.
local function on_notification(method, params)
  local autocmd = names.events[method]
  if not autocmd then
    return -- a newer agent's notification: tolerated, ignored
  end
  M.last_event = { name = method, data = params }
  local p = provider(params.provider) or {}
  local prompt = method == "loginPrompt" or method == "loginWaiting"
  local changed = method == "providersChanged" or (not prompt and params.account ~= nil)
  if changed and M.client and not M.client.stopping then
    -- Accounts or providers were added, removed or renewed: the lists come from
    -- status (never from an agent started anew just for that, hence the check).
    M.status(function() end)
  end
  if not prompt and not concerns_this_editor(p, params) then
    p = {}
  end
  if method == "userLoggedIn" then
    p.state, p.user, p.expiresAt = "loggedIn", params.user, params.expiresAt
    ui.close_login_prompt(params.provider)
    if M.options.notify_events then
      ui.notify(("Logged in to %s as %s"):format(display_name(params.provider), ui.user_name(params.user) or "?"))
    end
  elseif method == "userLoggedOut" then
    p.state, p.user, p.expiresAt = "loggedOut", nil, nil
    if M.options.notify_events and params.reason ~= "logout" then
      ui.notify(("Logged out of %s (%s)"):format(display_name(params.provider), params.reason), vim.log.levels.WARN)
    end
  elseif method == "tokenRefreshed" then
    p.expiresAt = params.expiresAt
  elseif method == "loginPrompt" then
    if params.url then
      -- The login :AuthAgentCompleteLogin finishes when it names none.
      M.last_browser_login = params.requestId
    end
    ui.show_login_prompt(params, display_name(params.provider), M.options)
  elseif method == "loginWaiting" then
    ui.notify(params.message)
  end
  fire(autocmd, params)
end

-- The agent's requests: presentLogin when the option is on, else -32601.
local function on_request(method, params, respond)
  local present = M.options.present_login
  if method ~= "presentLogin" or not present then
    return respond(nil, { code = -32601, message = "this editor does not handle " .. method })
  end
  if params.url then
    M.last_browser_login = params.requestId
  end
  ui.present_login(params, params.displayName or display_name(params.provider),
    type(present) == "table" and present.paste == true, respond)
end

--- The command that starts the agent (a list), from the options.
function M.command()
  local o = M.options
  if o.cmd then
    return o.cmd
  end
  local cmd = { o.bin or vim.env.AUTH_AGENT_BIN or "auth-agent" }
  if o.config then
    vim.list_extend(cmd, { "--config", vim.fn.expand(o.config) })
  end
  return vim.list_extend(cmd, o.args or {})
end

-- Subscribes to the wanted events the agent offers (initialize tells which),
-- so a newer agent's loginPrompt is picked up and an older one not refused.
local function subscribe(client)
  local params = { protocolVersion = "1", clientInfo = { name = "auth_agent.nvim", version = "1" } }
  if M.options.present_login then
    params.capabilities = { presentLogin = { openUrl = true, showCode = true, askRedirect = true } }
  end
  client:request("initialize", params,
    function(_, init)
      local offered = init and init.capabilities and init.capabilities.events
        or { "userLoggedIn", "userLoggedOut", "tokenRefreshed" }
      local events = vim.tbl_filter(function(e)
        return vim.tbl_contains(offered, e)
      end, M.options.events)
      client:request("subscribe", { events = events, providers = M.options.providers }, function(err, result)
        if err then
          ui.notify("subscribe failed: " .. err.message, vim.log.levels.ERROR)
        elseif result then
          M.providers = result.status.providers
        end
      end)
    end)
end

--- Starts the agent; options as in `defaults`. Calling it again restarts.
function M.setup(opts)
  -- Shallow on purpose: a list option (events, args) replaces the default.
  M.options = vim.tbl_extend("force", vim.deepcopy(defaults), opts or {})
  M.stop()
  local handlers = {
    on_notification = on_notification,
    on_request = on_request,
    on_exit = function(code, stderr)
      if M.client == nil or M.client.stopping then
        return
      end
      local why = stderr[#stderr] and (": " .. stderr[#stderr]) or ""
      ui.notify(("auth-agent exited with status %d%s"):format(code, why), vim.log.levels.ERROR)
    end,
  }
  -- One agent for every tool of the session: the socket agent, when there is one that answers.
  local path = M.options.socket
  if path == nil then
    path = vim.env.AUTH_AGENT_SOCK
  end
  if path and path ~= "" then
    local connection, why = rpc.connect(path, handlers, 1000)
    if connection then
      return M._started(connection)
    end
    ui.notify(("not using the agent at %s (%s); starting one"):format(path, why), vim.log.levels.WARN)
  end
  local cmd = M.command()
  if vim.fn.executable(cmd[1]) ~= 1 then
    ui.notify("auth-agent binary not found: " .. cmd[1] .. " (set bin, $AUTH_AGENT_BIN or PATH)", vim.log.levels.ERROR)
    return false
  end
  local client, err = rpc.start(cmd, handlers)
  if not client then
    ui.notify(err, vim.log.levels.ERROR)
    return false
  end
  return M._started(client)
end

--- The client of a started (or connected) agent becomes this editor's.
function M._started(client)
  M.client = client
  subscribe(client)
  -- Stopped before Neovim exits, so that its end is expected, not reported.
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = vim.api.nvim_create_augroup("auth_agent", { clear = true }),
    callback = function()
      M.stop()
    end,
  })
  return true
end

local function ensure_client()
  if not M.client then
    M.setup(M.options)
  end
  return M.client
end

--- Any method: callback(err, result). Returns the request id.
function M.request(method, params, callback)
  local client = ensure_client()
  if not client then
    local err = { message = "auth-agent is not running", data = { reason = names.client_errors.notRunning } }
    return vim.schedule(function()
      callback(err)
    end)
  end
  return client:request(method, params, callback)
end

--- Blocks up to timeout_ms (default options.timeout_ms); returns result, err.
function M.request_sync(method, params, timeout_ms)
  local client = ensure_client()
  if not client then
    return nil, { message = "auth-agent is not running", data = { reason = names.client_errors.notRunning } }
  end
  return client:request_sync(method, params, timeout_ms or M.options.timeout_ms)
end

function M.status(callback)
  return M.request("status", nil, function(err, result)
    if result then
      M.providers = result.providers
    end
    callback(err, result and result.providers)
  end)
end

-- A provider id, or a table that names one with more params: the table.
local function as_table(provider_or_req)
  if type(provider_or_req) == "table" then
    return provider_or_req
  end
  return { provider = provider_or_req }
end

local function is_url(text)
  return type(text) == "string" and (text:find("^https?://") ~= nil)
end

--- target: a provider id or { provider, flow? } (flow: one of the provider's flows, default its first);
--- or the URL of an API with no configuration, or { resource = URL, name?, flow?, open_browser? }: the
--- agent learns the API (as provider id name when given) and runs a browser login (flow "deviceCode":
--- a device login); the result's provider is the learned provider's id.
function M.login(target, credentials, callback)
  local t = is_url(target) and { resource = target } or as_table(target)
  if (t.provider == nil) == (t.resource == nil) then
    error("login takes a provider or a resource, exactly one of them", 2)
  end
  local params = { provider = t.provider, resource = t.resource, name = t.name, flow = t.flow, credentials = credentials,
    openBrowser = t.open_browser }
  return M.request("login", params, function(err, result)
    -- A failed login {resource} has no provider id to close a prompt of.
    local prompted = t.provider or (result and result.provider)
    if prompted then
      ui.close_login_prompt(prompted)
    end
    if callback then
      callback(err, result)
    end
  end)
end


--- Logs out: target is a provider id, or { provider, account?, all? }
--- (without account, the account this editor uses; all = true: every account).
function M.logout(target, callback)
  local t = as_table(target)
  return M.request("logout", { provider = t.provider, account = t.account, all = t.all or nil }, callback or function() end)
end

--- After a 401: target is a provider id or { provider, account? }.
function M.refresh(target, failed_authorization, callback)
  local t = as_table(target)
  return M.request("refresh", { provider = t.provider, account = t.account, failedAuthorization = failed_authorization },
    callback)
end

--- req: a provider id or { provider, account?, scopes?, audience?, resource? }.
function M.token(req, callback)
  local t = as_table(req)
  return M.request("token", {
    provider = t.provider, account = t.account, scopes = t.scopes, audience = t.audience, resource = t.resource,
  }, callback)
end

--- A request callback that, after a change of account succeeded, refreshes
--- the status cache (statusline, completion) before calling `callback`.
local function then_refresh_status(callback)
  return function(err, result)
    if not err then
      M.status(function() end)
    end
    if callback then
      callback(err, result)
    end
  end
end

--- Removes a learned provider (logged out, revoked, its registration deleted).
--- callback(err, { forgotten, revoked }).
function M.forget(provider_id, callback)
  return M.request("forget", { provider = provider_id }, then_refresh_status(callback))
end

--- This editor's account for provider_id from now on (account nil: the
--- provider's default again). Other editors and programs are not affected.
--- callback(err, { provider, account }).
function M.select_account(provider_id, account, callback)
  return M.request("selectAccount", { provider = provider_id, account = account or vim.NIL }, then_refresh_status(callback))
end

--- The provider's default account, for every editor, agent and the command
--- line (kept in the store). callback(err, { provider, account }).
function M.set_default_account(provider_id, account, callback)
  return M.request("setDefaultAccount", { provider = provider_id, account = account }, then_refresh_status(callback))
end

--- Finishes a waiting browser login (request_id: its loginPrompt's requestId)
--- with the whole redirect URL its browser ended at, pasted back because that
--- browser could not reach the agent. callback(err, {}); a wrong state, a used
--- URL or an unknown request is -32602 and the login keeps waiting.
function M.complete_login(request_id, redirect_url, callback)
  return M.request("completeLogin", { requestId = request_id, redirectUrl = redirect_url }, callback)
end

local function sign_params(req)
  local headers = req.headers
  if headers and next(headers) == nil then
    headers = nil
  end
  return {
    request = { method = req.method or "GET", url = req.url, headers = headers },
    provider = req.provider,
    account = req.account,
    scopes = req.scopes,
    audience = req.audience,
    resource = req.resource,
  }
end

--- Headers authorizing an HTTP request: req = {url, method?, headers?, provider?}.
--- callback(err, headers, result); headers is {} when no provider covers the URL.
function M.sign(req, callback)
  return M.request("sign", sign_params(req), function(err, result)
    callback(err, result and result.headers or nil, result)
  end)
end

--- sign, blocking up to timeout_ms; returns headers, err.
function M.sign_sync(req, timeout_ms)
  local result, err = M.request_sync("sign", sign_params(req), timeout_ms)
  return result and result.headers or nil, err
end

--- An HTTP request signed by the agent, sent with curl, and after a 401 to a
--- signed request sent once more after a refresh:
--- req = {url, method?, headers?, body?, provider?, timeout_ms? (30000)}.
--- callback(err, {status, headers, body, signed, provider, retried}); header
--- names lowercased. Redirects are not followed.
function M.http(req, callback)
  return http.request({ sign = M.sign, refresh = M.refresh }, req, callback)
end

--- The agent sends the request itself (signed like sign; after a 401 for the
--- token it sent, refreshed and resent once): req = {url, method?, headers?,
--- body?, provider?, account?, scopes?, audience?, resource?, login?,
--- open_browser?, timeout_seconds?}. callback(err, result): {status, headers, body or
--- bodyBase64, provider, signed, retried, login?}. When no provider covers the
--- URL and it answered 401 with a Bearer challenge, result.login is {resource,
--- authorizationServer, scopes} for M.login({ resource = ... }); login =
--- "ifNeeded" lets the agent log in itself (prompting, as M.login does) and resend.
function M.fetch(req, callback)
  local params = sign_params(req)
  params.request.body = req.body
  params.login = req.login
  params.openBrowser = req.open_browser
  params.timeoutSeconds = req.timeout_seconds
  return M.request("fetch", params, callback)
end

--- sign, sign_sync, http and token with `defaults` under each request's own
--- fields: e.g. with({ account = "bob", scopes = { "read" } }) sends every
--- request as bob with a read-only token, the retry after a 401 included.
function M.with(defaults)
  local function merged(req)
    return vim.tbl_extend("keep", req or {}, defaults)
  end
  return {
    sign = function(req, callback)
      return M.sign(merged(req), callback)
    end,
    sign_sync = function(req, timeout_ms)
      return M.sign_sync(merged(req), timeout_ms)
    end,
    http = function(req, callback)
      return M.http(merged(req), callback)
    end,
    token = function(req, callback)
      return M.token(merged(as_table(req)), callback)
    end,
  }
end

--- Asks for the provider's login fields and logs in (:AuthAgentLogin); given
--- a URL, learns that API and logs in to it (:AuthAgentLogin https://…).
function M.login_interactive(provider_id)
  if is_url(provider_id) then
    return M.login(provider_id, nil, function(err)
      if err then
        ui.notify(("Login to %s failed: %s"):format(provider_id, err.message), vim.log.levels.ERROR)
      end
    end)
  end
  M.status(function(err, providers)
    if err then
      return ui.notify("status failed: " .. err.message, vim.log.levels.ERROR)
    end
    local function go(p)
      if not p then
        return
      end
      local credentials = ui.ask_credentials(p.fields)
      if credentials == false then
        return ui.notify("Login cancelled")
      end
      M.login(p.id, credentials, function(login_err)
        if login_err then
          ui.notify(("Login to %s failed: %s"):format(p.displayName, login_err.message), vim.log.levels.ERROR)
        end
      end)
    end
    if provider_id then
      local p = provider(provider_id)
      if not p then
        return ui.notify("No provider " .. provider_id, vim.log.levels.ERROR)
      end
      return go(p)
    end
    vim.ui.select(providers, {
      prompt = "Log in to",
      format_item = function(p)
        return p.displayName .. " (" .. p.state .. ")"
      end,
    }, go)
  end)
end

--- :AuthAgentLogout[!] [provider] [account]: the account given, else the
--- one this editor uses; every account of the provider with all = true.
function M.logout_interactive(provider_id, account, all)
  local function go(id)
    if id then
      M.logout({ provider = id, account = account, all = all }, function(err)
        if err then
          ui.notify(("Logout of %s failed: %s"):format(id, err.message), vim.log.levels.ERROR)
        else
          local whom = all and " (every account)" or (account and (" (" .. account .. ")") or "")
          ui.notify("Logged out of " .. display_name(id) .. whom)
        end
      end)
    end
  end
  if provider_id then
    return go(provider_id)
  end
  local ids = vim.tbl_map(function(p)
    return p.id
  end, vim.tbl_filter(function(p)
    return p.state == "loggedIn"
  end, M.providers))
  if #ids == 1 then
    return go(ids[1])
  end
  vim.ui.select(ids, { prompt = "Log out of" }, go)
end

function M.show_status()
  M.status(function(err, providers)
    if err then
      return ui.notify("status failed: " .. err.message, vim.log.levels.ERROR)
    end
    ui.notify(table.concat(ui.status_lines(providers), "\n"))
  end)
end

--- :AuthAgentAccount provider [account]: this editor's account (without
--- one, pick among the provider's accounts, or its default).
function M.select_account_interactive(provider_id, account)
  local function go(choice)
    M.select_account(provider_id, choice, function(err)
      if err then
        return ui.notify(("Selecting an account of %s failed: %s"):format(provider_id, err.message), vim.log.levels.ERROR)
      end
      ui.notify(("%s: this editor uses %s"):format(display_name(provider_id), choice or "the default account"))
    end)
  end
  if account then
    return go(account)
  end
  local default = "(the default account)"
  vim.ui.select(vim.list_extend({ default }, M.account_ids(provider_id)), { prompt = "Account of " .. provider_id },
    function(item)
      if item then
        go(item ~= default and item or nil)
      end
    end)
end

--- :AuthAgentDefaultAccount provider account.
function M.set_default_account_interactive(provider_id, account)
  M.set_default_account(provider_id, account, function(err)
    if err then
      return ui.notify(("Setting the default account of %s failed: %s"):format(provider_id, err.message),
        vim.log.levels.ERROR)
    end
    ui.notify(("%s: the default account is %s"):format(display_name(provider_id), account))
  end)
end

--- :AuthAgentCompleteLogin [requestId]: asks for the redirect URL with
--- |vim.ui.input()| and hands it to the login (default: this editor's last
--- browser login).
function M.complete_login_interactive(request_id)
  request_id = request_id and (tonumber(request_id) or request_id) or M.last_browser_login
  if request_id == nil then
    return ui.notify("No browser login is waiting in this editor", vim.log.levels.ERROR)
  end
  vim.ui.input({ prompt = "Address the browser ended at (http://127.0.0.1:…/callback?…): " }, function(url)
    if not url or url == "" then
      return
    end
    M.complete_login(request_id, url, function(err)
      if err then
        return ui.notify(("That URL was not taken: %s"):format(err.message), vim.log.levels.ERROR)
      end
      ui.notify("Got the redirect URL; finishing the login…")
    end)
  end)
end

--- Provider ids, for command completion.
function M.provider_ids()
  return vim.tbl_map(function(p)
    return p.id
  end, M.providers)
end

--- The logged-in account ids of a provider, for command completion.
function M.account_ids(provider_id)
  local p = provider(provider_id) or {}
  return vim.tbl_map(function(a)
    return a.id
  end, p.accounts or {})
end

--- Handles one raw line as if the agent had sent it (for tests and debugging).
function M.handle_line(line)
  ensure_client():handle_line(line)
end

--- shutdown + exit; the agent is gone when this returns.
function M.stop()
  local client = M.client
  if client then
    client.stopping = true
    client:stop(2000)
    M.client = nil
  end
end

return M

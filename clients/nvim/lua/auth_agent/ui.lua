-- What the user sees: login prompts (device code / browser), field input,
-- status and event messages.
local M = {}

-- Open login-prompt floating windows by provider id.
M.prompts = {}
-- Their countdown timers, by provider id.
local timers = {}

local TITLE = { title = "auth-agent" }

function M.notify(message, level)
  vim.notify(message, level or vim.log.levels.INFO, TITLE)
end

--- The best short name for a user object (userinfo claims, a login API's user, {username}).
function M.user_name(user)
  if type(user) ~= "table" then
    return nil
  end
  return user.preferred_username or user.username or user.name or user.email or user.sub
end

--- Seconds since the epoch of an RFC 3339 UTC time ("2030-01-01T00:00:00Z"), or nil.
function M.utc_seconds(text)
  local y, mo, d, h, mi, s = tostring(text):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return nil
  end
  local as_local = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d),
    hour = tonumber(h), min = tonumber(mi), sec = tonumber(s), isdst = false })
  -- os.time reads the fields as local time: add this zone's offset from UTC.
  local now = os.time()
  return as_local + os.difftime(now, os.time(os.date("!*t", now)))
end

--- "Expires in 4:59" (or "Expired") for a prompt's expiresAt.
function M.countdown(expires_at, now)
  local left = (M.utc_seconds(expires_at) or 0) - (now or os.time())
  if left <= 0 then
    return "Expired"
  end
  return ("Expires in %d:%02d"):format(math.floor(left / 60), left % 60)
end

local function prompt_lines(p, display_name)
  local lines = { "Log in to " .. (display_name or p.provider) }
  if p.userCode then
    table.insert(lines, "Code:    " .. p.userCode)
    if p.verificationUri then
      table.insert(lines, "Go to:   " .. p.verificationUri)
    end
    if p.verificationUriComplete then
      table.insert(lines, "Or open: " .. p.verificationUriComplete)
    end
  elseif p.url then
    table.insert(lines, "Open:    " .. p.url)
    -- For a browser that cannot reach the agent's loopback listener (another machine).
    table.insert(lines, "Ends on an address that does not load? :AuthAgentCompleteLogin and paste it")
  end
  if p.expiresAt then
    table.insert(lines, M.countdown(p.expiresAt))
  end
  return lines
end

-- Rewrites the float's last line every second until the login expires (the
-- window then closes) or the window is gone.
local function start_countdown(provider, win, expires_at)
  local uv = vim.uv or vim.loop
  local timer = uv.new_timer()
  timers[provider] = timer
  timer:start(1000, 1000, vim.schedule_wrap(function()
    if timers[provider] ~= timer or not vim.api.nvim_win_is_valid(win) then
      timer:stop()
      timer:close()
      if timers[provider] == timer then
        timers[provider] = nil
      end
      return
    end
    local text = M.countdown(expires_at)
    local buf = vim.api.nvim_win_get_buf(win)
    vim.api.nvim_buf_set_option(buf, "modifiable", true)
    vim.api.nvim_buf_set_lines(buf, -2, -1, false, { text })
    vim.api.nvim_buf_set_option(buf, "modifiable", false)
    if text == "Expired" then
      M.close_login_prompt(provider)
    end
  end))
end

local function open_float(lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
  vim.api.nvim_buf_set_keymap(buf, "n", "q", "<cmd>close<cr>", { nowait = true, silent = true })
  local width = 0
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  width = math.min(width + 2, math.max(vim.o.columns - 4, 10))
  -- Not entered: the user keeps typing where they were while they log in.
  return vim.api.nvim_open_win(buf, false, {
    relative = "editor",
    row = 1,
    col = math.max(vim.o.columns - width - 2, 0),
    width = width,
    height = #lines,
    style = "minimal",
    border = "rounded",
  })
end

--- Opens a URL on the person's side: vim.ui.open (Neovim 0.10+), else
--- open/xdg-open. Returns whether an opener ran.
function M.open_url(url)
  if vim.ui.open then
    local ok, cmd = pcall(vim.ui.open, url)
    return ok and cmd ~= nil
  end
  local opener = vim.fn.has("mac") == 1 and "open" or "xdg-open"
  if vim.fn.executable(opener) == 1 then
    return vim.fn.jobstart({ opener, url }, { detach = true }) > 0
  end
  return false
end

--- Shows a loginPrompt notification: vim.notify plus a floating window that
--- stays until the login ends (close_login_prompt) or `q`.
function M.show_login_prompt(params, display_name, opts)
  local lines = prompt_lines(params, display_name)
  M.notify(table.concat(lines, "\n"))
  M.close_login_prompt(params.provider)
  M.prompts[params.provider] = open_float(lines)
  if params.expiresAt then
    start_countdown(params.provider, M.prompts[params.provider], params.expiresAt)
  end
  local url = params.verificationUriComplete or params.url
  if opts and opts.open_browser and url then
    M.open_url(url)
  end
end

--- Answers the agent's presentLogin: the login prompt window (code or URL,
--- countdown), the URL opened with open_url, and respond({opened = true}). A
--- browser login with `paste` (a browser that cannot reach the agent), or
--- whose URL no opener took, also asks for the address the browser ended at
--- with vim.ui.input: respond({redirectUrl = it}); empty: keep waiting for
--- the browser ({opened = true}); Esc: the person declined ({cancelled = true}).
function M.present_login(params, display_name, paste, respond)
  M.show_login_prompt(params, display_name)
  local url = params.verificationUriComplete or params.verificationUri or params.url
  local opened = url ~= nil and M.open_url(url)
  if params.kind ~= "browser" or (opened and not paste) then
    return respond({ opened = true })
  end
  vim.ui.input({ prompt = "Address the browser ended at (empty: wait for the browser): " }, function(input)
    if input == nil then
      respond({ cancelled = true })
    elseif input == "" then
      respond({ opened = true })
    else
      respond({ redirectUrl = input })
    end
  end)
end

function M.close_login_prompt(provider)
  local win = M.prompts[provider]
  M.prompts[provider] = nil
  timers[provider] = nil -- its timer stops at its next tick
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
end

--- Asks for each field (secrets via inputsecret). Returns the credentials
--- table, nil when the flow needs none, or false when the user gave up.
function M.ask_credentials(fields)
  if not fields or #fields == 0 then
    return nil
  end
  local credentials = {}
  for _, field in ipairs(fields) do
    local ask = field.secret and vim.fn.inputsecret or vim.fn.input
    local ok, value = pcall(ask, field.label .. ": ")
    if not ok or value == "" then
      return false
    end
    credentials[field.name] = value
  end
  return credentials
end

function M.status_lines(providers)
  local lines = {}
  for _, p in ipairs(providers) do
    local line = ("%-12s %-20s %s"):format(p.id, p.displayName, p.state)
    if p.state == "loggedIn" then
      line = line .. " as " .. (M.user_name(p.user) or "?")
      if p.expiresAt then
        line = line .. " until " .. p.expiresAt
      end
    end
    table.insert(lines, line)
    for _, a in ipairs(p.accounts or {}) do
      local marks = {}
      if a.id == p.account then
        table.insert(marks, "this editor")
      end
      if a.default then
        table.insert(marks, "default")
      end
      local mark = #marks > 0 and (" (" .. table.concat(marks, ", ") .. ")") or ""
      table.insert(lines, ("  account %s: %s%s"):format(a.id, M.user_name(a.user) or "?", mark))
    end
  end
  return lines
end

return M

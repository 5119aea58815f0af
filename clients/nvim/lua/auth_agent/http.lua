-- require("auth_agent").http: an HTTP request signed by the agent and sent
-- by curl (through vim.system where Neovim has it, else jobstart: Debian
-- ships 0.7), sent again once after a 401 for the token the agent gave.
local names = require("auth_agent.names")

local M = {}

M.default_timeout_ms = 30000

-- Raised here, not by the agent: no code, the agent's reason for the same failure.
local function request_failed(message)
  return { message = message, data = { reason = names.errors[1011], retryable = true } }
end

local function invalid(message)
  return { message = message, data = { reason = names.errors[-32602], retryable = false } }
end

--- The request's headers with the agent's added; an agent header replaces
--- the caller's of the same name, in any case.
function M.merge_headers(headers, signed)
  local merged = {}
  local replaced = {}
  for name in pairs(signed) do
    replaced[name:lower()] = true
  end
  for name, value in pairs(headers or {}) do
    if not replaced[name:lower()] then
      merged[name] = value
    end
  end
  for name, value in pairs(signed) do
    merged[name] = value
  end
  return merged
end

--- The header lines curl reads from stdin (-H @-), so that the token never
--- appears in `ps`; nil and an error for a header that would split a line.
function M.header_lines(headers)
  local lines = {}
  for name, value in pairs(headers) do
    local line = name .. ": " .. tostring(value)
    if line:find("[\r\n]") then
      return nil, invalid("header " .. name .. " contains a line break")
    end
    table.insert(lines, line .. "\n")
  end
  table.sort(lines)
  return table.concat(lines)
end

--- curl's arguments: response headers and body to files (binary safe),
--- bounded by --max-time, redirects not followed (a 3xx is the answer).
function M.curl_args(req, paths, timeout_ms)
  local args = { "curl", "--silent", "--show-error", "--globoff", "--header", "@-",
    "--dump-header", paths.headers, "--output", paths.body,
    "--max-time", ("%.3f"):format(timeout_ms / 1000) }
  local method = (req.method or "GET"):upper()
  if method == "HEAD" then
    table.insert(args, "--head")
  else
    vim.list_extend(args, { "--request", method })
  end
  if paths.data then
    vim.list_extend(args, { "--data-binary", "@" .. paths.data })
  end
  vim.list_extend(args, { "--url", req.url })
  return args
end

--- Status and headers (names lowercased, repeats joined with ", ") from
--- curl's header dump: its last block, after any 1xx.
function M.parse_head(text)
  local status, headers
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do
    local code = line:match("^HTTP/[%d.]+ (%d%d%d)")
    if code then
      status, headers = tonumber(code), {}
    elseif headers then
      local name, value = line:match("^([^:%s]+):%s*(.-)%s*$")
      if name then
        name = name:lower()
        headers[name] = headers[name] and (headers[name] .. ", " .. value) or value
      end
    end
  end
  return status, headers
end

local function read_all(path)
  local f = io.open(path, "rb")
  if not f then
    return ""
  end
  local text = f:read("*a")
  f:close()
  return text
end

local function write_all(path, data)
  local f = assert(io.open(path, "wb"))
  f:write(data)
  f:close()
end

--- Runs cmd with stdin; on_done(exit_code, stderr) on the main loop, once.
local function run(cmd, stdin, on_done)
  if vim.system then
    local ok, err = pcall(vim.system, cmd, { stdin = stdin, text = true }, function(obj)
      vim.schedule(function()
        on_done(obj.code, obj.stderr or "")
      end)
    end)
    if not ok then
      vim.schedule(function()
        on_done(-1, tostring(err))
      end)
    end
    return
  end
  local stderr = {}
  local ok, job = pcall(vim.fn.jobstart, cmd, {
    stderr_buffered = true,
    on_stderr = function(_, data)
      stderr = data
    end,
    on_exit = function(_, code)
      on_done(code, table.concat(stderr, "\n"))
    end,
  })
  if not ok or job <= 0 then
    return vim.schedule(function()
      on_done(-1, "cannot run " .. cmd[1])
    end)
  end
  vim.fn.chansend(job, stdin)
  vim.fn.chanclose(job, "stdin")
end

--- Sends req = {url, method?, headers?, body?} with the headers given, once;
--- callback(err, {status, headers, body}). Temporary files live in Neovim's
--- private temp directory and are removed before the callback runs.
function M.send(req, headers, timeout_ms, callback)
  local lines, err = M.header_lines(headers)
  if not lines then
    return vim.schedule(function()
      callback(err)
    end)
  end
  if vim.fn.executable("curl") ~= 1 then
    return vim.schedule(function()
      callback(request_failed("curl is not installed; http() needs it"))
    end)
  end
  local paths = { headers = vim.fn.tempname(), body = vim.fn.tempname() }
  if req.body then
    paths.data = vim.fn.tempname()
    write_all(paths.data, req.body)
  end
  run(M.curl_args(req, paths, timeout_ms), lines, function(code, stderr)
    local status, response_headers = M.parse_head(read_all(paths.headers))
    local body = read_all(paths.body)
    for _, path in pairs(paths) do
      os.remove(path)
    end
    if code ~= 0 or not status then
      local why = vim.trim(stderr) ~= "" and vim.trim(stderr) or ("curl exited with " .. code)
      return callback(request_failed(("%s %s failed: %s"):format(req.method or "GET", req.url, why)))
    end
    callback(nil, { status = status, headers = response_headers, body = body })
  end)
end

--- Signs, sends, and after a 401 to a signed request refreshes (passing the
--- Authorization that failed, so a token already replaced is not refreshed
--- twice) and sends once more, re-signed; a second 401 is the answer. The
--- refresh names req.account, so the retry goes out as the same account.
--- agent = {sign = fn(req, cb(err, headers, result)),
---          refresh = fn({provider, account}, failed, cb(err))}.
--- callback(err, {status, headers, body, signed, provider, retried}), once.
function M.request(agent, req, callback)
  if type(req) ~= "table" or type(req.url) ~= "string" then
    return vim.schedule(function()
      callback(invalid("http() needs { url = ... }"))
    end)
  end
  local timeout_ms = req.timeout_ms or M.default_timeout_ms
  local function attempt(retried)
    agent.sign(req, function(sign_err, signed_headers, result)
      if sign_err then
        return callback(sign_err)
      end
      M.send(req, M.merge_headers(req.headers, signed_headers), timeout_ms, function(err, response)
        if err then
          return callback(err)
        end
        if response.status == 401 and result.signed and not retried then
          local target = { provider = result.provider, account = req.account }
          return agent.refresh(target, signed_headers.Authorization, function(refresh_err)
            if refresh_err then
              return callback(refresh_err)
            end
            attempt(true)
          end)
        end
        response.signed, response.provider, response.retried = result.signed, result.provider, retried
        callback(nil, response)
      end)
    end)
  end
  attempt(false)
end

return M

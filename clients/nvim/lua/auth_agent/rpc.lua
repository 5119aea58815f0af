-- JSON-RPC 2.0 over a job's stdin/stdout (or a socket agent's connection),
-- one message per line.
local names = require("auth_agent.names")

local M = {}

local Client = {}
Client.__index = Client

-- Agent errors come as {code, message, data = {reason, retryable, provider?}};
-- errors raised here have no code and one of names.client_errors as reason.
local function client_error(reason, message)
  return { message = message, data = { reason = reason, retryable = false } }
end

-- lua-cjson turns an empty Lua table into [], but params must be an object.
local function as_params(params)
  if params == nil or (type(params) == "table" and next(params) == nil) then
    return vim.empty_dict()
  end
  return params
end

local function decode(line)
  local ok, msg = pcall(vim.json.decode, line, { luanil = { object = true, array = true } })
  if ok and type(msg) == "table" then
    return msg
  end
end

--- Starts `cmd` (a list). handlers: on_notification(method, params),
--- on_request(method, params, respond) for the agent's requests (respond(result)
--- or respond(nil, {code, message}), once; without it every one is -32601),
--- on_exit(code, stderr_tail). Returns the client, or nil and a message.
function M.start(cmd, handlers)
  local self = setmetatable({
    handlers = handlers or {},
    pending = {},
    next_id = 0,
    partial = "",
    stderr = {},
    running = false,
  }, Client)
  local ok, job = pcall(vim.fn.jobstart, cmd, {
    on_stdout = function(_, data)
      self:_on_stdout(data)
    end,
    on_stderr = function(_, data)
      self:_on_stderr(data)
    end,
    on_exit = function(_, code)
      self:_on_exit(code)
    end,
  })
  if not ok or job <= 0 then
    return nil, "cannot run " .. table.concat(cmd, " ")
  end
  self.job, self.running = job, true
  return self
end

--- Connects to the socket agent at `path` (`auth-agent serve --socket`) through
--- a vim.loop pipe; handlers as for start() (on_exit when the connection ends).
--- The agent must answer a ping within timeout_ms. Returns the client, or nil
--- and a message.
function M.connect(path, handlers, timeout_ms)
  local uv = vim.uv or vim.loop
  local pipe = uv.new_pipe(false)
  local self = setmetatable({
    handlers = handlers or {},
    pending = {},
    next_id = 0,
    partial = "",
    stderr = {},
    running = false,
    pipe = pipe,
  }, Client)
  local connected, failure = false, nil
  pipe:connect(path, function(err)
    connected, failure = err == nil, err
  end)
  if not vim.wait(timeout_ms, function()
    return connected or failure ~= nil
  end, 10) or not connected then
    pipe:close()
    return nil, ("cannot connect to %s: %s"):format(path, failure or "no answer")
  end
  self.running = true
  pipe:read_start(function(err, data)
    -- A luv callback: the handlers run on the main loop.
    vim.schedule(function()
      if data then
        local lines = vim.split(data, "\n", { plain = true })
        self:_on_stdout(lines)
      elseif self.running then
        self:_on_exit(err and 1 or 0)
        if not pipe:is_closing() then
          pipe:close()
        end
      end
    end)
  end)
  local _, err = self:request_sync("ping", nil, timeout_ms)
  if err then
    self.running = false
    pipe:close()
    return nil, ("the agent at %s does not answer: %s"):format(path, err.message)
  end
  return self
end

-- Job output arrives in chunks: the first item continues the previous
-- chunk's last line, the last item is the start of the next line.
function Client:_on_stdout(data)
  data[1] = self.partial .. data[1]
  self.partial = table.remove(data)
  for _, line in ipairs(data) do
    if line ~= "" then
      self:handle_line(line)
    end
  end
end

-- Keeps the last lines of the agent's log, to explain an unexpected exit.
function Client:_on_stderr(data)
  for _, line in ipairs(data) do
    if line ~= "" then
      table.insert(self.stderr, line)
      if #self.stderr > 20 then
        table.remove(self.stderr, 1)
      end
    end
  end
end

function Client:_on_exit(code)
  self.running = false
  local pending = self.pending
  self.pending = {}
  for _, p in pairs(pending) do
    p.callback(client_error(names.client_errors.agentExited,
      ("auth-agent exited (status %d) before answering %s"):format(code, p.method)))
  end
  if self.handlers.on_exit then
    self.handlers.on_exit(code, self.stderr)
  end
end

--- Handles one line from the agent; public so tests can feed messages in.
function Client:handle_line(line)
  local msg = decode(line)
  if not msg then
    return
  end
  if msg.method ~= nil and msg.id == nil then
    if self.handlers.on_notification then
      self.handlers.on_notification(msg.method, msg.params or {})
    end
  elseif msg.method ~= nil then
    self:_answer(msg)
  elseif msg.id ~= nil then
    local p = self.pending[msg.id]
    if not p then
      return -- the answer to a request that timed out or was cancelled
    end
    self.pending[msg.id] = nil
    local err = msg.error
    if err then
      err.data = err.data or {}
      err.data.reason = err.data.reason or names.errors[err.code]
    end
    p.callback(err, msg.result)
  end
end

-- Every request from the agent gets one answer: the handler's, whenever it
-- responds (a person may take a while), or -32601 when there is none.
function Client:_answer(msg)
  local answered = false
  local function respond(result, err)
    if answered then
      return
    end
    answered = true
    self:_send({ jsonrpc = "2.0", id = msg.id, result = err == nil and result or nil, error = err })
  end
  if not self.handlers.on_request then
    return respond(nil, { code = -32601, message = "Method not found" })
  end
  local ok, failure = pcall(self.handlers.on_request, msg.method, msg.params or {}, respond)
  if not ok then
    respond(nil, { code = -32603, message = "the editor failed to answer " .. msg.method .. ": " .. tostring(failure) })
  end
end

-- Raises for params JSON cannot hold (a function, say): the caller's bug.
local function encode(msg)
  return vim.json.encode(msg) .. "\n"
end

-- A write to a job that just died fails quietly: on_exit answers what is pending.
function Client:_write(line)
  if self.pipe then
    if not self.pipe:is_closing() then
      self.pipe:write(line)
    end
    return
  end
  pcall(vim.fn.chansend, self.job, line)
end

function Client:_send(msg)
  self:_write(encode(msg))
end

--- Sends a request; callback(err, result) runs once. Returns the request id.
function Client:request(method, params, callback)
  self.next_id = self.next_id + 1
  local id = self.next_id
  local line = encode({ jsonrpc = "2.0", id = id, method = method, params = as_params(params) })
  if not self.running then
    vim.schedule(function()
      callback(client_error(names.client_errors.notRunning, "auth-agent is not running"), nil)
    end)
    return id
  end
  self.pending[id] = { method = method, callback = callback }
  self:_write(line)
  return id
end

function Client:notify(method, params)
  if self.running then
    self:_send({ jsonrpc = "2.0", method = method, params = as_params(params) })
  end
end

--- Forgets a pending request (its callback will not run) and asks the agent
--- to stop working on it.
function Client:cancel(id)
  if self.pending[id] then
    self.pending[id] = nil
    self:notify("$/cancelRequest", { id = id })
  end
end

--- Blocks (running the event loop) until the answer or timeout_ms.
--- Returns result, err. Not for use in fast callbacks (vim.wait forbids it).
function Client:request_sync(method, params, timeout_ms)
  local done, result, err = false, nil, nil
  local id = self:request(method, params, function(e, r)
    done, err, result = true, e, r
  end)
  if not vim.wait(timeout_ms, function()
    return done
  end, 10) then
    self:cancel(id)
    return nil, client_error(names.client_errors.timeout,
      ("no answer to %s within %d ms"):format(method, timeout_ms))
  end
  return result, err
end

--- shutdown, then exit; the job is stopped if it outlives timeout_ms.
function Client:stop(timeout_ms)
  if not self.running then
    return
  end
  self:request_sync("shutdown", nil, timeout_ms or 2000)
  self:notify("exit")
  if not vim.wait(timeout_ms or 2000, function()
    return not self.running
  end, 10) then
    if self.pipe then
      self.running = false
      self.pipe:close()
    else
      vim.fn.jobstop(self.job)
    end
  end
end

--- The agent's process id; nil for a socket agent's connection (not our child).
function Client:pid()
  if self.running and not self.pipe then
    return vim.fn.jobpid(self.job)
  end
end

return M

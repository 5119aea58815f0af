-- :checkhealth auth_agent: what the plugin needs, and whether the agent answers.
local M = {}

-- vim.health gained start/ok/... in 0.10 (report_* before); 0.7 has require("health").
local function reporter()
  local h = vim.health or require("health")
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    info = h.info or h.report_info,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
  }
end

function M.check()
  local report = reporter()
  local auth = require("auth_agent")
  report.start("auth_agent")
  if vim.fn.has("nvim-0.7") == 1 then
    report.ok("Neovim 0.7 or later")
  else
    report.error("Neovim 0.7 or later is needed")
  end
  local cmd = auth.command()
  local bin = vim.fn.exepath(cmd[1])
  if bin == "" then
    report.error("auth-agent binary not found: " .. cmd[1], { "Set `bin` in setup(), $AUTH_AGENT_BIN, or put auth-agent on PATH" })
  else
    local version = vim.trim(vim.fn.system({ bin, "--version" }))
    report.ok(("binary: %s (%s)"):format(bin, vim.v.shell_error == 0 and version or "no --version"))
  end
  local config = auth.options.config and vim.fn.expand(auth.options.config)
  if config and vim.fn.filereadable(config) ~= 1 then
    report.error("config not readable: " .. config)
  elseif config then
    report.ok("config: " .. config)
  end
  local client = auth.client
  if client and client.running then
    local _, err = client:request_sync("ping", nil, 2000)
    if err then
      report.error("the agent does not answer: " .. err.message)
    else
      report.ok(("agent running (pid %s), answers ping"):format(client:pid()))
    end
  else
    report.info("agent not running: it starts on setup() or the first :AuthAgent command")
  end
  if vim.fn.executable("curl") == 1 then
    report.ok("curl found (for http())")
  else
    report.warn("curl not found: http() needs it", { "Install curl" })
  end
end

return M

-- User commands; the agent starts on require("auth_agent").setup() or on
-- the first command, whichever comes first.
if vim.g.loaded_auth_agent then
  return
end
vim.g.loaded_auth_agent = true

local function complete_provider(lead)
  return vim.tbl_filter(function(id)
    return id:find(lead, 1, true) == 1
  end, require("auth_agent").provider_ids())
end

local function provider_arg(opts)
  return opts.args ~= "" and opts.args or nil
end

vim.api.nvim_create_user_command("AuthAgentLogin", function(opts)
  require("auth_agent").login_interactive(provider_arg(opts))
end, { nargs = "?", complete = complete_provider, desc = "Log in through an auth-agent provider" })

vim.api.nvim_create_user_command("AuthAgentLogout", function(opts)
  require("auth_agent").logout_interactive(provider_arg(opts))
end, { nargs = "?", complete = complete_provider, desc = "Log out of an auth-agent provider" })

vim.api.nvim_create_user_command("AuthAgentStatus", function()
  require("auth_agent").show_status()
end, { nargs = 0, desc = "Show auth-agent providers and login state" })

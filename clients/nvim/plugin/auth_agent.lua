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
  return opts.fargs[1]
end

-- The provider first, then one of its accounts.
local function complete_provider_account(lead, line)
  local words = vim.split(line, "%s+", { trimempty = false })
  if #words <= 2 then
    return complete_provider(lead)
  end
  return vim.tbl_filter(function(id)
    return id:find(lead, 1, true) == 1
  end, require("auth_agent").account_ids(words[2]))
end

vim.api.nvim_create_user_command("AuthAgentLogin", function(opts)
  require("auth_agent").login_interactive(provider_arg(opts))
end, { nargs = "?", complete = complete_provider, desc = "Log in through an auth-agent provider, or to an API's URL" })

vim.api.nvim_create_user_command("AuthAgentLogout", function(opts)
  require("auth_agent").logout_interactive(opts.fargs[1], opts.fargs[2], opts.bang)
end, { nargs = "*", bang = true, complete = complete_provider_account,
  desc = "Log out of an account of an auth-agent provider (!: of every account)" })

vim.api.nvim_create_user_command("AuthAgentAccount", function(opts)
  require("auth_agent").select_account_interactive(opts.fargs[1], opts.fargs[2])
end, { nargs = "+", complete = complete_provider_account, desc = "Choose this editor's account of a provider" })

vim.api.nvim_create_user_command("AuthAgentDefaultAccount", function(opts)
  if #opts.fargs ~= 2 then
    return vim.notify("usage: :AuthAgentDefaultAccount {provider} {account}", vim.log.levels.ERROR)
  end
  require("auth_agent").set_default_account_interactive(opts.fargs[1], opts.fargs[2])
end, { nargs = "+", complete = complete_provider_account, desc = "Set a provider's default account" })

vim.api.nvim_create_user_command("AuthAgentForget", function(opts)
  require("auth_agent").forget(opts.fargs[1], function(err)
    if err then
      vim.notify("Forget failed: " .. err.message, vim.log.levels.ERROR)
    else
      vim.notify("Forgot " .. opts.fargs[1])
    end
  end)
end, { nargs = 1, complete = complete_provider, desc = "Remove a provider the agent learned" })

vim.api.nvim_create_user_command("AuthAgentCompleteLogin", function(opts)
  require("auth_agent").complete_login_interactive(opts.fargs[1])
end, { nargs = "?", desc = "Finish a browser login with the redirect URL pasted back" })

vim.api.nvim_create_user_command("AuthAgentStatus", function()
  require("auth_agent").show_status()
end, { nargs = 0, desc = "Show auth-agent providers and login state" })

-- The protocol's names, mirrored from schema/openrpc.json; the test fails
-- when the schema has a method, notification or error this table lacks.
local M = {}

-- Method name -> "request" (answered) or "notification" (never answered).
M.methods = {
  initialize = "request",
  ping = "request",
  shutdown = "request",
  status = "request",
  login = "request",
  logout = "request",
  selectAccount = "request",
  setDefaultAccount = "request",
  completeLogin = "request",
  sign = "request",
  fetch = "request",
  forget = "request",
  refresh = "request",
  token = "request",
  subscribe = "request",
  unsubscribe = "request",
  exit = "notification",
  ["$/cancelRequest"] = "notification",
}

-- Agent-to-host notification -> the User autocmd pattern it fires.
-- loginPrompt goes to the host whose device-code or browser login is waiting;
-- loginWaiting to the host whose login waits for another one of the provider.
M.events = {
  userLoggedIn = "AuthAgentLoggedIn",
  userLoggedOut = "AuthAgentLoggedOut",
  tokenRefreshed = "AuthAgentTokenRefreshed",
  providersChanged = "AuthAgentProvidersChanged",
  loginPrompt = "AuthAgentLoginPrompt",
  loginWaiting = "AuthAgentLoginWaiting",
}

-- Agent-to-host requests (ids like "agent-3") -> how this plugin answers:
-- presentLogin with the present_login option, the others with -32601
-- (loginFields goes only to hosts that declare it, which this one does not).
M.agent_requests = {
  loginFields = "methodNotFound",
  presentLogin = "present_login",
}

-- Error code -> reason, for errors that carry no data.reason.
M.errors = {
  [-32700] = "parseError",
  [-32600] = "invalidRequest",
  [-32601] = "methodNotFound",
  [-32602] = "invalidParams",
  [-32603] = "internalError",
  [-32800] = "requestCancelled",
  [1001] = "notLoggedIn",
  [1002] = "unknownProvider",
  [1003] = "invalidCredentials",
  [1004] = "sessionExpired",
  [1005] = "authServerUnavailable",
  [1006] = "originNotAllowed",
  [1007] = "excessiveRefresh",
  [1008] = "loginDenied",
  [1009] = "loginTimedOut",
  [1010] = "storeUnavailable",
  [1011] = "requestFailed",
  [1012] = "responseTooLarge",
  [1013] = "scopeNotGranted",
  [1014] = "discoveryFailed",
  [1015] = "notAllowed",
  [1016] = "configurationInvalid",
}

-- Errors raised by this client, not the agent: they have no code.
M.client_errors = {
  agentExited = "agentExited",
  notRunning = "notRunning",
  timeout = "timeout",
}

return M

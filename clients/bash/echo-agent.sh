#!/usr/bin/env bash
# A stand-in agent for test.sh: answers each request with the params it got
# (.echo) and login, fetch and forget with results shaped like the real agent's
# for an API it learns, to check what auth-agent.sh sends without a server to learn from.
while IFS= read -r line; do
  [[ $(jq -r .method <<<"$line") == exit ]] && exit 0
  jq -c 'select(.id != null) | {method, params} as $echo | {jsonrpc: "2.0", id, result: (
    if .method == "login" then {provider: "api.example.com", account: "1", user: {sub: "alice"}, expiresAt: null, echo: $echo}
    elif .method == "fetch" then {status: 401, headers: {}, body: "", signed: false, retried: false, echo: $echo}
      + (if .params.login then {} else {login: {resource: .params.request.url, authorizationServer: "https://auth.example.com", scopes: ["mcp"]}} end)
    elif .method == "forget" then {forgotten: true, revoked: true, echo: $echo}
    elif .method == "shutdown" then null
    else {echo: $echo} end)}' <<<"$line"
done

#!/usr/bin/env bash
# Runs test/auth_agent_test.lua in headless Neovim against the real agent and
# a dev issuer. Usage: run.sh [path/to/auth-agent]. Ends with "N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
plugin=$(dirname -- "$here")
root=$(cd "$plugin/../.." && pwd)

bin=${1:-${AUTH_AGENT_BIN:-$(command -v auth-agent || true)}}
if ! command -v nvim >/dev/null 2>&1; then echo "SKIP: nvim is not installed (apt-get install neovim)"; exit 0; fi
if [[ -z $bin || ! -x $bin ]]; then echo "SKIP: auth-agent binary not found (pass it, set AUTH_AGENT_BIN or put it on PATH)"; exit 0; fi
bin=$(cd "$(dirname -- "$bin")" && pwd)/$(basename -- "$bin")

tmp=$(mktemp -d)
trap 'exec {issuer_fd}>&-; rm -rf -- "$tmp"' EXIT

# The dev issuer serves until its stdin closes: hold a pipe to it open.
exec {issuer_fd}> >(exec "$bin" dev-issuer --port 0 >"$tmp/issuer")
for _ in {1..50}; do [[ -s $tmp/issuer ]] && break; sleep 0.1; done
issuer=$(sed -n 's/.*"issuer":"\([^"]*\)".*/\1/p' "$tmp/issuer")
if [[ -z $issuer ]]; then echo "FAIL the dev issuer did not start"; echo "0 passed, 1 failed"; exit 1; fi

cat >"$tmp/config.json" <<JSON
{"refreshWindowSeconds": 60, "store": {"kind": "memory"},
 "providers": [{"id": "corp", "displayName": "Corp", "flow": "password", "origins": ["$issuer"],
   "tokenEndpoint": "$issuer/token", "revocationEndpoint": "$issuer/revoke",
   "userinfoEndpoint": "$issuer/userinfo", "clientId": "cli", "scopes": ["read", "write"]}]}
JSON

# The issuer's pipe is closed for nvim so that only this script keeps it open.
ISSUER=$issuer TEST_CONFIG=$tmp/config.json AUTH_AGENT_BIN=$bin \
  SCHEMA=$root/schema/openrpc.json README=$plugin/README.md ECHO_AGENT=$here/echo_agent.py \
  timeout 120 nvim --headless -u NONE -i NONE --cmd "set runtimepath^=$plugin" \
  -c "luafile $here/auth_agent_test.lua" {issuer_fd}>&- </dev/null
rc=$?
if ((rc == 124)); then echo "FAIL the test run timed out"; echo "0 passed, 1 failed"; fi
exit "$rc"

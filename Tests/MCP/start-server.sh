#!/usr/bin/env bash
# Starts FastMCP (PyPI `fastmcp` with the official MCP SDK `mcp`, pinned in requirements.txt)
# on 127.0.0.1 as a protected MCP server for auth-agent's tests, in the foreground.
#
#   Tests/MCP/start-server.sh [INFO_FILE]
#
# 1. Creates a virtualenv at ${FASTMCP_VENV:-/tmp/auth-agent-fastmcp-venv} and installs
#    requirements.txt from PyPI, unless one built from the same requirements exists.
# 2. Writes one JSON line describing the server (base URL, MCP endpoint, metadata URLs,
#    issuer, scopes, request log) to INFO_FILE, then runs server.py until killed.
#
# Environment: FASTMCP_PORT (default: a free port), FASTMCP_REQUEST_LOG (a file that gets
# `METHOD PATH STATUS` per request), FASTMCP_ACCESS_TOKEN_LIFETIME (seconds, default 3600),
# FASTMCP_REQUIRED_SCOPES, FASTMCP_VALID_SCOPES, FASTMCP_VENV, and FASTMCP_PARENT_PID: when
# set, the server stops once that process is gone (a crashed test runner cannot leave it behind).
# Exit codes: 3 no usable python3 venv, 4 the install from PyPI failed.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
info_file="${1:-}"
venv="${FASTMCP_VENV:-/tmp/auth-agent-fastmcp-venv}"
python="${FASTMCP_PYTHON:-python3}"
log() { echo "fastmcp: $*" >&2; }

command -v "$python" >/dev/null 2>&1 || { log "no $python on PATH"; exit 3; }

# Keyed by the requirements' content and renamed into place when complete, as in
# Tests/Interop/start-server.sh: a concurrent or interrupted run never sees a half-built venv.
wanted="$("$python" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$here/requirements.txt")"
if [ "$(cat "$venv/.requirements-sha256" 2>/dev/null || true)" != "$wanted" ]; then
  staging="$venv.staging.$$"
  rm -rf "$staging"
  trap 'rm -rf "$staging"' EXIT
  log "creating virtualenv $venv"
  "$python" -m venv "$staging" >&2 || { log "python3 -m venv is unavailable (on Debian: apt-get install python3-venv)"; exit 3; }
  log "installing $(grep -c '==' "$here/requirements.txt") pinned packages from PyPI"
  "$staging/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --timeout 30 \
    -r "$here/requirements.txt" >&2 || { log "pip install failed"; exit 4; }
  echo "$wanted" > "$staging/.requirements-sha256"
  rm -rf "$venv"
  "$python" -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$staging" "$venv" 2>/dev/null || rm -rf "$staging"
  trap - EXIT
fi
py="$venv/bin/python"

port="${FASTMCP_PORT:-$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}"
export PYTHONDONTWRITEBYTECODE=1
args=(--port "$port")
[ -n "$info_file" ] && args+=(--info "$info_file")
[ -n "${FASTMCP_REQUEST_LOG:-}" ] && args+=(--request-log "$FASTMCP_REQUEST_LOG")

server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; true; }
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
log "serving http://127.0.0.1:$port/mcp"
# In the background and waited for, so the TERM/INT traps run (bash defers traps while a foreground child runs).
"$py" "$here/server.py" "${args[@]}" >&2 &
server=$!
if [ -n "${FASTMCP_PARENT_PID:-}" ]; then
  ( while kill -0 "$FASTMCP_PARENT_PID" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 1; done
    kill "$server" 2>/dev/null ) &
fi
set +e
wait "$server"
status=$?
server=""
exit "$status"

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

# shellcheck source=../Interop/server-lib.sh
source "$here/../Interop/server-lib.sh"
ensure_venv "$python" "$venv" "$here/requirements.txt"
py="$venv/bin/python"

port="${FASTMCP_PORT:-$(free_port "$py")}"
export PYTHONDONTWRITEBYTECODE=1
args=(--port "$port")
[ -n "$info_file" ] && args+=(--info "$info_file")
[ -n "${FASTMCP_REQUEST_LOG:-}" ] && args+=(--request-log "$FASTMCP_REQUEST_LOG")

stop_server_at_exit
log "serving http://127.0.0.1:$port/mcp"
"$py" "$here/server.py" "${args[@]}" >&2 &
server=$!
stop_with_parent "${FASTMCP_PARENT_PID:-}"
serve_until_exit

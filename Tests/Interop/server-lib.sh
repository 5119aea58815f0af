# Sourced by the scripts that start a test server in the foreground: Tests/Interop/start-server.sh,
# Tests/Interop/start-glewlwyd.sh and Tests/MCP/start-server.sh. Each defines `log` first;
# `server` holds the server's pid once started, `work` a temp directory (when the script has one).

# ensure_venv PYTHON VENV REQUIREMENTS: makes VENV hold REQUIREMENTS (pinned, from PyPI) unless
# it already does; exits 3 when PYTHON or its venv module is missing, 4 when pip fails.
# The venv is keyed by the requirements' content: a changed pin rebuilds it. It is built
# beside its final path and renamed into place, so a concurrent or interrupted run never
# sees a half-installed one (bin/python resolves its venv from its own location).
ensure_venv() {
  local python="$1" venv="$2" requirements="$3" wanted
  command -v "$python" >/dev/null 2>&1 || { log "no $python on PATH"; exit 3; }
  wanted="$("$python" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$requirements")"
  [ "$(cat "$venv/.requirements-sha256" 2>/dev/null || true)" != "$wanted" ] || return 0
  staging="$venv.staging.$$"
  rm -rf "$staging"
  trap 'rm -rf "$staging"' EXIT
  log "creating virtualenv $venv"
  "$python" -m venv "$staging" >&2 || { log "python3 -m venv is unavailable (on Debian: apt-get install python3-venv)"; exit 3; }
  log "installing $(grep -c '==' "$requirements") pinned packages from PyPI"
  "$staging/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --timeout 30 \
    -r "$requirements" >&2 || { log "pip install failed"; exit 4; }
  echo "$wanted" > "$staging/.requirements-sha256"
  rm -rf "$venv"
  # os.rename is atomic and refuses a non-empty target: if another run got there first, use theirs.
  "$python" -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$staging" "$venv" 2>/dev/null || rm -rf "$staging"
  trap - EXIT
}

# free_port [PYTHON]: a loopback port free right now. Bash alone cannot bind: it asks the
# kernel through PYTHON (python3 by default), and without one picks in the ephemeral range.
free_port() {
  "${1:-python3}" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 20000))
}

# stop_server_at_exit: at exit, stop the server (once started) and remove `work`; TERM and INT
# exit with the usual codes, which runs it.
stop_server_at_exit() {
  server=""
  trap stop_server EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
}
stop_server() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  [ -z "${work:-}" ] || rm -rf "$work"
  true
}

# stop_with_parent PID: stops the server once process PID (the test runner) is gone, so a
# runner that crashed cannot leave it behind; does nothing without a PID.
stop_with_parent() {
  [ -n "$1" ] || return 0
  ( while kill -0 "$1" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 1; done
    kill "$server" 2>/dev/null ) &
}

# serve_until_exit: waits for the server, which was started in the background so that the
# TERM/INT traps run (bash defers traps while a foreground child runs), and exits with its status.
serve_until_exit() {
  local status
  set +e
  wait "$server"
  status=$?
  server=""
  exit "$status"
}

#!/usr/bin/env bash
# CI entry point for the Python client: runs its unittest suite against the
# agent named by $AUTH_AGENT_BIN (or auth-agent on PATH); without one the
# tests that need it are skipped, saying so.
#
# The optional extras (requests, httpx; tests/requirements.txt) are installed
# from PyPI into a venv at ${AUTH_AGENT_PY_VENV:-/tmp/auth-agent-python-client-venv},
# reused while tests/requirements.txt is unchanged, and the suite runs with
# that venv's python. Without venv or PyPI the suite runs with $PYTHON
# (default python3) and only the tests of those extras skip, saying why.
set -euo pipefail
cd "$(dirname "$0")"
python="${PYTHON:-python3}"
venv="${AUTH_AGENT_PY_VENV:-/tmp/auth-agent-python-client-venv}"
log() { echo "run-tests.sh: $*" >&2; }

# Keyed by the requirements' content; built beside its final path and renamed
# into place, so a concurrent or interrupted run never sees a half-built one.
wanted="$("$python" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' tests/requirements.txt)"
if [ "$(cat "$venv/.requirements-sha256" 2>/dev/null || true)" != "$wanted" ]; then
  staging="$venv.staging.$$"
  rm -rf "$staging"
  trap 'rm -rf "$staging"' EXIT
  log "creating $venv with tests/requirements.txt from PyPI"
  if ! "$python" -m venv "$staging" >&2; then
    log "python3 -m venv is unavailable (on Debian: apt-get install python3-venv); the requests and httpx tests will skip"
  elif ! "$staging/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --timeout 30 \
      -r tests/requirements.txt >&2; then
    log "pip could not install tests/requirements.txt (no PyPI?); the requests and httpx tests will skip"
  else
    echo "$wanted" > "$staging/.requirements-sha256"
    rm -rf "$venv"
    # os.rename is atomic and refuses a non-empty target: if another run got there first, use theirs.
    "$python" -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$staging" "$venv" 2>/dev/null || rm -rf "$staging"
  fi
  rm -rf "$staging"
  trap - EXIT
fi
if [ "$(cat "$venv/.requirements-sha256" 2>/dev/null || true)" = "$wanted" ]; then
  python="$venv/bin/python"
fi
exec "$python" -m unittest discover -s tests -v

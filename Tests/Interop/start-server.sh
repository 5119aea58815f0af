#!/usr/bin/env bash
# Starts a real OAuth 2.0 / OpenID Connect server — django-oauth-toolkit, pinned in
# requirements.txt — on 127.0.0.1 for auth-agent's interop tests, in the foreground.
#
#   Tests/Interop/start-server.sh [INFO_FILE]
#
# 1. Creates a virtualenv at ${INTEROP_VENV:-/tmp/auth-agent-interop-venv} and installs
#    requirements.txt from PyPI, unless one built from the same requirements exists.
# 2. Makes a fresh SQLite database and RSA signing key in a temp dir, migrates, and
#    creates user alice and one application per grant type.
# 3. Writes one JSON line describing the server (base URL, endpoints, user, client ids
#    and the confidential client's secret) to INFO_FILE, or to stdout without one,
#    then runs `manage.py runserver --noreload 127.0.0.1:PORT` until killed.
#
# Environment: INTEROP_PORT (default: a free port), INTEROP_ACCESS_TOKEN_LIFETIME (60),
# INTEROP_REFRESH_GRACE_SECONDS (0), INTEROP_DEVICE_INTERVAL (5), INTEROP_VENV, and
# INTEROP_PARENT_PID: when set, the server stops once that process is gone (a test
# runner that crashed cannot leave it behind).
# Everything else goes to stderr. Exit codes: 3 no usable python3 venv, 4 the install
# from PyPI failed, 5 setting up the server failed.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
info_file="${1:--}"
venv="${INTEROP_VENV:-/tmp/auth-agent-interop-venv}"
python="${INTEROP_PYTHON:-python3}"
log() { echo "interop: $*" >&2; }

command -v "$python" >/dev/null 2>&1 || { log "no $python on PATH"; exit 3; }

# The venv is keyed by the requirements' content: a changed pin rebuilds it. It is built
# beside its final path and renamed into place, so a concurrent or interrupted run never
# sees a half-installed one (bin/python resolves its venv from its own location).
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
  # os.rename is atomic and refuses a non-empty target: if another run got there first, use theirs.
  "$python" -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$staging" "$venv" 2>/dev/null || rm -rf "$staging"
  trap - EXIT
fi
py="$venv/bin/python"

port="${INTEROP_PORT:-$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}"
base="http://127.0.0.1:$port"

work="$(mktemp -d "${TMPDIR:-/tmp}/auth-agent-interop.XXXXXX")"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

export DJANGO_SETTINGS_MODULE=interop_server.settings
export PYTHONDONTWRITEBYTECODE=1
export INTEROP_BASE_URL="$base"
export INTEROP_DB_PATH="$work/db.sqlite3"
export INTEROP_RSA_KEY_PATH="$work/oidc-rsa.pem"
export INTEROP_SECRET_KEY="$("$py" -c 'import secrets; print(secrets.token_urlsafe(48))')"

cd "$here"
"$py" - "$INTEROP_RSA_KEY_PATH" <<'PY' || { log "could not generate the RSA key"; exit 5; }
import os, sys
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, pem)
os.close(fd)
PY
"$py" manage.py migrate --no-input -v 0 >&2 || { log "migrate failed"; exit 5; }
"$py" manage.py interop_bootstrap --base-url "$base" --output "$info_file" || { log "bootstrap failed"; exit 5; }
log "serving $base (issuer $base/o)"

# In the background and waited for, so the TERM/INT traps run (bash defers traps
# while a foreground child runs) and the temp dir is always removed.
"$py" manage.py runserver --noreload --skip-checks "127.0.0.1:$port" >&2 &
server=$!
if [ -n "${INTEROP_PARENT_PID:-}" ]; then
  ( while kill -0 "$INTEROP_PARENT_PID" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 1; done
    kill "$server" 2>/dev/null ) &
fi
set +e
wait "$server"
status=$?
server=""
exit "$status"

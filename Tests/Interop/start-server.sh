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

# shellcheck source=server-lib.sh
source "$here/server-lib.sh"
ensure_venv "$python" "$venv" "$here/requirements.txt"
py="$venv/bin/python"

port="${INTEROP_PORT:-$(free_port "$py")}"
base="http://127.0.0.1:$port"

work="$(mktemp -d "${TMPDIR:-/tmp}/auth-agent-interop.XXXXXX")"
stop_server_at_exit

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

"$py" manage.py runserver --noreload --skip-checks "127.0.0.1:$port" >&2 &
server=$!
stop_with_parent "${INTEROP_PARENT_PID:-}"
serve_until_exit

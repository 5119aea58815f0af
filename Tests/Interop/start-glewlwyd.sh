#!/usr/bin/env bash
# Starts a real OAuth 2.0 / OpenID Connect server with DPoP — Glewlwyd, Debian's
# `glewlwyd` package (2.7.5) — on 127.0.0.1 for auth-agent's DPoP interop tests, in the foreground.
#
#   Tests/Interop/start-glewlwyd.sh [INFO_FILE]
#
# 1. Makes a fresh SQLite database in a temp dir from the package's own script
#    (/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz: the schema and the default
#    administrator admin/password) and a configuration listening on 127.0.0.1 only.
# 2. Starts glewlwyd, logs in as the administrator (POST /api/auth/) and, through the
#    admin API, adds user alice, a public client, a confidential client, a confidential
#    client that authenticates only with private_key_jwt (its RSA key made here by openssl,
#    0600, the public half registered as the client's `pubkey`) and three OIDC plugin
#    instances, then applies their settings as an administrator changes them on a running
#    server: PUT /api/mod/plugin/NAME, then PUT /api/mod/plugin/NAME/reset.
#      oidc        DPoP allowed, iat window 60 s, no nonces
#      oidc-nonce  the same with mandatory nonces (a new nonce every 2 successes)
#      oidc-par    pushed authorization requests required (RFC 9126; request_uri for 60 s),
#                  signed client authentication (request-parameter-allow, the client's pubkey/jwks)
# 3. Writes one JSON line describing the server (endpoints of both instances, user,
#    clients, the confidential client's secret) to INFO_FILE, or to stdout without one,
#    then serves until killed.
#
# Environment: GLEWLWYD_PORT (default: a free port), GLEWLWYD_REDIRECT_PORT (the only
# loopback redirect port the public client accepts: Glewlwyd matches redirect URIs
# exactly; default 8400), GLEWLWYD (the binary, default: glewlwyd on the PATH), and
# INTEROP_PARENT_PID: when set, the server stops once that process is gone.
# Everything else goes to stderr. Exit codes: 3 glewlwyd (or sqlite3, curl) is not
# installed (on Debian: apt-get install glewlwyd curl), 5 setting up the server failed.
set -euo pipefail

log() { echo "glewlwyd-interop: $*" >&2; }
# shellcheck source=server-lib.sh
source "$(cd "$(dirname "$0")" && pwd)/server-lib.sh"
info_file="${1:--}"
glewlwyd="${GLEWLWYD:-$(command -v glewlwyd || true)}"
init_sql=/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz
[ -n "$glewlwyd" ] && [ -x "$glewlwyd" ] || { log "glewlwyd is not installed (on Debian: apt-get install glewlwyd)"; exit 3; }
[ -r "$init_sql" ] || { log "no $init_sql: not Debian's glewlwyd package"; exit 3; }
for tool in sqlite3 curl openssl python3; do command -v "$tool" >/dev/null 2>&1 || { log "no $tool on the PATH"; exit 3; }; done

port="${GLEWLWYD_PORT:-$(free_port)}"
redirect_port="${GLEWLWYD_REDIRECT_PORT:-8400}"
base="http://127.0.0.1:$port"
api="$base/api"

work="$(mktemp -d "${TMPDIR:-/tmp}/auth-agent-glewlwyd.XXXXXX")"
stop_server_at_exit

zcat "$init_sql" | sqlite3 "$work/glewlwyd.db" || { log "could not initialise the database"; exit 5; }
cat > "$work/glewlwyd.conf" <<CONF
port=$port
bind_address="127.0.0.1"
external_url="$base"
login_url="login.html"
api_prefix="api"
static_files_path="/usr/share/glewlwyd/webapp/"
log_mode="console"
log_level="INFO"
cookie_secure=0
session_expiration=3600
session_key="GLEWLWYD2_SESSION_ID"
admin_session_authentication="cookie"
profile_session_authentication="cookie"
allow_multiple_user_per_session=true
login_api_enabled=true
plugin_api_run_enabled=""
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="/usr/lib/glewlwyd/user"
client_module_path="/usr/lib/glewlwyd/client"
user_auth_scheme_module_path="/usr/lib/glewlwyd/scheme"
plugin_module_path="/usr/lib/glewlwyd/plugin"
use_secure_connection=false
secure_connection_key_file="/nonexistent"
secure_connection_pem_file="/nonexistent"
secure_connection_ca_file="/nonexistent"
hash_algorithm="SHA512"
database = { type = "sqlite3"; path = "$work/glewlwyd.db"; };
CONF

"$glewlwyd" --config-file="$work/glewlwyd.conf" >&2 &
server=$!
stop_with_parent "${INTEROP_PARENT_PID:-}"

random() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
jar="$work/admin.cookies"
# One admin API call; fails the setup on anything but 200.
admin() {
  local method="$1" path="$2" body="${3:-}" status
  status="$(curl -sS -o "$work/answer" -w '%{http_code}' -b "$jar" -c "$jar" -X "$method" \
    -H 'Content-Type: application/json' ${body:+--data-binary "$body"} "$api$path")" || status=000
  [ "$status" = 200 ] || { log "$method $path answered $status: $(head -c 500 "$work/answer" 2>/dev/null)"; exit 5; }
}

for _ in $(seq 100); do
  curl -s -o /dev/null "$api/glwd/" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { log "glewlwyd exited during startup"; exit 5; }
  sleep 0.1
done
admin POST /auth/ '{"username":"admin","password":"password"}'

password="wonderland-Glewlwyd1"
secret="$(random)"
signing_key="$(random)"
# offline_access: a scope like any other to Glewlwyd (it issues refresh tokens without it), listed by oidc-idp.
admin POST /scope/ '{"name":"offline_access","display_name":"Offline access","description":"Refresh tokens","password_required":false,"scheme":{}}'
admin POST /user/ "{\"username\":\"alice\",\"name\":\"Alice\",\"email\":\"alice@example.test\",\"password\":\"$password\",\"scope\":[\"openid\",\"offline_access\"],\"enabled\":true}"
# Public: code (PKCE) and device. Glewlwyd refuses the password grant from a public client (403, empty body).
admin POST /client/ "{\"client_id\":\"agent-public\",\"client_name\":\"auth-agent (public)\",\"confidential\":false,\"enabled\":true,
  \"authorization_type\":[\"code\",\"device_authorization\",\"refresh_token\",\"delete_token\"],
  \"redirect_uri\":[\"http://127.0.0.1:$redirect_port/callback\"],\"scope\":[\"openid\"]}"
# Signed client authentication only: Glewlwyd reads the client's `pubkey` (PEM) when an assertion's
# kid names no key of its `jwks`. The secret exists so that the same client refused with Basic shows the method is enforced.
(umask 077; openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/client-rsa.pem" 2>/dev/null) \
  || { log "openssl could not make the client's key"; exit 5; }
pubkey="$(openssl pkey -in "$work/client-rsa.pem" -pubout | python3 -c 'import json, sys; print(json.dumps(sys.stdin.read()))')"
jwt_secret="$(random)"
admin POST /client/ "{\"client_id\":\"agent-jwt\",\"client_name\":\"auth-agent (private_key_jwt)\",\"confidential\":true,\"enabled\":true,
  \"client_secret\":\"$jwt_secret\",\"token_endpoint_auth_method\":[\"private_key_jwt\"],\"pubkey\":$pubkey,
  \"authorization_type\":[\"code\",\"password\",\"client_credentials\",\"refresh_token\",\"delete_token\"],
  \"redirect_uri\":[\"http://127.0.0.1:$redirect_port/callback\"],\"scope\":[\"openid\"]}"
admin POST /client/ "{\"client_id\":\"agent-service\",\"client_name\":\"auth-agent (confidential)\",\"confidential\":true,\"enabled\":true,
  \"client_secret\":\"$secret\",\"token_endpoint_auth_method\":[\"client_secret_basic\",\"client_secret_post\"],
  \"authorization_type\":[\"password\",\"client_credentials\",\"refresh_token\",\"delete_token\"],\"redirect_uri\":[],\"scope\":[\"openid\"]}"

# The OIDC plugin's parameters: HS256 tokens (a shared secret: no key file to make), PKCE, every grant.
plugin_parameters() {
  local name="$1" dpop="$2"
  echo "{\"iss\":\"$api/$name\",\"jwt-type\":\"sha\",\"jwt-key-size\":\"256\",\"key\":\"$signing_key\",
    \"access-token-duration\":3600,\"refresh-token-duration\":86400,\"code-duration\":600,\"refresh-token-rolling\":true,
    \"allow-non-oidc\":true,\"auth-type-code-enabled\":true,\"auth-type-token-enabled\":false,\"auth-type-id-token-enabled\":true,
    \"auth-type-device-enabled\":true,\"auth-type-client-enabled\":true,\"auth-type-refresh-enabled\":true,
    \"auth-type-password-enabled\":true,\"pkce-allowed\":true,\"pkce-method-plain-allowed\":false,
    \"device-authorization-expiration\":600,\"device-authorization-interval\":1,
    \"introspection-revocation-allowed\":true,\"introspection-revocation-allow-target-client\":true$dpop}"
}
dpop=',"oauth-dpop-allowed":true,"oauth-dpop-iat-duration":60,"oauth-dpop-iat-gap-duration":0'
par=',"oauth-par-allowed":true,"oauth-par-required":true,"oauth-par-duration":60,"oauth-par-request_uri-prefix":"urn:ietf:params:oauth:request_uri:",
  "request-parameter-allow":true,"request-maximum-exp":3600,"client-pubkey-parameter":"pubkey","client-jwks-parameter":"jwks","oauth-as-iss-id":true'
# Issue 31's generic rules: scopes_supported lists offline_access, open RFC 7591 registration (with RFC 7592
# management, so a test can read back what was registered).
idp=',"allowed-scope":["openid","offline_access"],"register-client-allowed":true,"register-client-management-allowed":true'
# The same, with RFC 8707 on: a resource outside its resource-scope map is refused (invalid_target).
target="$idp"',"resource-allowed":true,"resource-scope":{"openid":["https://elsewhere.example/api"]}'
for instance in "oidc:false:" "oidc-nonce:true:" "oidc-par:false:$par" "oidc-idp:false:$idp" "oidc-target:false:$target"; do
  name="${instance%%:*}"; rest="${instance#*:}"; nonces="${rest%%:*}"; extra="${rest#*:}"
  admin POST /mod/plugin/ "{\"module\":\"oidc\",\"name\":\"$name\",\"display_name\":\"$name\",\"parameters\":$(plugin_parameters "$name" "")}"
  admin PUT "/mod/plugin/$name" "{\"module\":\"oidc\",\"name\":\"$name\",\"display_name\":\"$name\",\"parameters\":$(plugin_parameters "$name" \
    "$dpop,\"oauth-dpop-nonce-mandatory\":$nonces,\"oauth-dpop-nonce-counter\":1$extra")}"
  admin PUT "/mod/plugin/$name/reset"
done

endpoints() {
  local p="$api/$1"
  echo "{\"issuer\":\"$p\",\"discoveryUrl\":\"$p/.well-known/openid-configuration\",\"authorizationEndpoint\":\"$p/auth\",
    \"tokenEndpoint\":\"$p/token\",\"userinfoEndpoint\":\"$p/userinfo\",\"deviceAuthorizationEndpoint\":\"$p/device_authorization\",
    \"revocationEndpoint\":\"$p/revoke\",\"introspectionEndpoint\":\"$p/introspect\",\"registrationEndpoint\":\"$p/register\"}"
}
line="$(tr -d '\n' <<JSON
{"baseUrl":"$base","apiUrl":"$api","discoveryUrl":"$api/oidc/.well-known/openid-configuration","plugins":{"plain":$(endpoints oidc),"nonce":$(endpoints oidc-nonce),"par":$(endpoints oidc-par),"idp":$(endpoints oidc-idp),"target":$(endpoints oidc-target)},
 "username":"alice","password":"$password","redirectPort":$redirect_port,
 "clients":{"public":{"clientId":"agent-public"},"confidential":{"clientId":"agent-service","clientSecret":"$secret"},
   "jwt":{"clientId":"agent-jwt","clientSecret":"$jwt_secret","keyFile":"$work/client-rsa.pem"}}}
JSON
)"
if [ "$info_file" = - ]; then echo "$line"; else
  umask 077; echo "$line" > "$info_file.tmp" && mv "$info_file.tmp" "$info_file"; fi
log "serving $base (issuers $api/oidc, $api/oidc-nonce, $api/oidc-par, $api/oidc-idp, $api/oidc-target)"

serve_until_exit

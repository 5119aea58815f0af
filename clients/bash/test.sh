#!/usr/bin/env bash
# Drives clients/bash/auth-agent.sh against the real agent binary and its dev
# issuer. Usage: test.sh [path/to/auth-agent]. Ends with "N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
schema=$root/schema/openrpc.json

bin=${1:-${AUTH_AGENT_BIN:-$(command -v auth-agent || true)}}
if ! command -v jq >/dev/null 2>&1; then echo "SKIP: jq is not installed (apt-get install jq)"; exit 0; fi
if [[ -z $bin || ! -x $bin ]]; then echo "SKIP: auth-agent binary not found (pass it, set AUTH_AGENT_BIN or put it on PATH)"; exit 0; fi
export AUTH_AGENT_BIN=$bin

source "$here/auth-agent.sh"

tmp=$(mktemp -d)
errlog=$tmp/stderr.log
cleanup() {
  auth_agent_stop
  [[ -n ${issuer_fd:-} ]] && exec {issuer_fd}>&-
  rm -rf -- "$tmp"
}
trap cleanup EXIT

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
not_ok() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
# check NAME COMMAND...: passes when the command succeeds.
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
contains() { [[ $1 == *"$2"* ]]; }

# The dev issuer serves until its stdin closes: hold a pipe to it open.
exec {issuer_fd}> >(exec "$bin" dev-issuer --port 0 >"$tmp/issuer")
for _ in {1..50}; do [[ -s $tmp/issuer ]] && break; sleep 0.1; done
issuer=$(jq -r .issuer "$tmp/issuer" 2>/dev/null)
if [[ -z $issuer || $issuer == null ]]; then echo "FAIL the dev issuer did not start"; echo "0 passed, 1 failed"; exit 1; fi
admin() { curl -sf -X POST -d "$2" "$issuer/_admin/$1" >/dev/null; }

config=$tmp/config.json
jq -n --arg iss "$issuer" '{
  refreshWindowSeconds: 60,
  store: {kind: "memory"},
  providers: [{id: "corp", displayName: "Corp", flow: "password", origins: [$iss],
    tokenEndpoint: "\($iss)/token", revocationEndpoint: "\($iss)/revoke",
    userinfoEndpoint: "\($iss)/userinfo", clientId: "cli"}]}' >"$config"
login_alice='{"provider":"corp","credentials":{"username":"alice","password":"wonderland"}}'

echo "# names match schema/openrpc.json"
missing=$(jq -r '.methods[].name' "$schema" | while read -r m; do [[ -n ${AUTH_AGENT_METHODS[$m]:-} ]] || echo "$m"; done)
check "every schema method is in AUTH_AGENT_METHODS${missing:+ (missing: $missing)}" test -z "$missing"
wrong=$(jq -r '.methods[] | "\(.name) \(if .["x-notification"] then "notification" else "request" end)"' "$schema" |
  while read -r m kind; do [[ ${AUTH_AGENT_METHODS[$m]:-} == "$kind" ]] || echo "$m"; done)
check "requests and notifications are told apart${wrong:+ (wrong: $wrong)}" test -z "$wrong"
missing=$(jq -r '.["x-notifications"][].name' "$schema" | while read -r n; do contains " ${AUTH_AGENT_EVENTS[*]} " " $n " || echo "$n"; done)
check "every schema notification is in AUTH_AGENT_EVENTS${missing:+ (missing: $missing)}" test -z "$missing"
missing=$(jq -r '.components.errors[] | "\(.code) \(.data.reason)"' "$schema" |
  while read -r code reason; do [[ ${AUTH_AGENT_ERRORS[$code]:-} == "$reason" ]] || echo "$code"; done)
check "every schema error code maps to its reason${missing:+ (wrong: $missing)}" test -z "$missing"

echo "# prerequisites are reported clearly"
out=$(env PATH=/nonexistent "$BASH" -c 'source "$1"; auth_agent_start' _ "$here/auth-agent.sh" 2>&1); rc=$?
check "no jq: non-zero and says how to install it" eval '((rc != 0)) && contains "$out" "auth-agent.sh: jq is required (apt-get install jq)"'
out=$(AUTH_AGENT_BIN=/nonexistent/auth-agent "$BASH" -c 'source "$1"; auth_agent_start' _ "$here/auth-agent.sh" 2>&1); rc=$?
check "no binary: non-zero and names it" eval '((rc == 2)) && contains "$out" "binary not found: /nonexistent/auth-agent"'
echo '{"providers": 3}' >"$tmp/bad.json"
out=$(timeout 10 "$BASH" -c 'source "$1"; auth_agent_start --config "$2"' _ "$here/auth-agent.sh" "$tmp/bad.json" 2>&1); rc=$?
check "bad config: start fails with the agent's message, no hang" eval '((rc == 2)) && contains "$out" "did not start"'

echo "# login, sign, notifications"
seen=()
on_event() { seen+=("$1:$(jq -r '.reason // .provider' <<<"$2")"); }
AUTH_AGENT_ON_NOTIFICATION=on_event
check "start" auth_agent_start --config "$config"
sub=$(auth_agent_call subscribe '{"events":["userLoggedIn","userLoggedOut","tokenRefreshed"]}' 2>>"$errlog")
check "subscribe answers the events" test "$(jq -c .events <<<"$sub")" = '["userLoggedIn","userLoggedOut","tokenRefreshed"]'
auth_agent_call login "$login_alice" >"$tmp/login" 2>>"$errlog"
check "login returns the user" test "$(jq -r .user.preferred_username "$tmp/login")" = alice
check "userLoggedIn reached the hook" contains "${seen[*]}" "userLoggedIn:corp"
headers=$(auth_agent_sign "$issuer/userinfo" 2>>"$errlog")
check "sign prints an Authorization header" contains "$headers" "Authorization: Bearer "
me=$(curl -sf -H @- "$issuer/userinfo" <<<"$headers")
check "the signed curl request is accepted" test "$(jq -r .sub <<<"$me")" = alice
out=$(auth_agent_sign "https://unrelated.example.org/" 2>>"$errlog"); rc=$?
check "an uncovered URL is not signed: no output, status 0" eval '((rc == 0)) && [[ -z $out ]]'
before=$(<"$AUTH_AGENT_DIR/seq")
(auth_agent_call ping '{}' >/dev/null); (auth_agent_call ping '{}' >/dev/null)
check "ids stay unique across subshells" test "$(<"$AUTH_AGENT_DIR/seq")" -eq $((before + 2))

echo "# proactive refresh"
admin fault '{"accessTokenLifetime":0}'
auth_agent_call login "$login_alice" >/dev/null 2>>"$errlog"
admin fault '{"accessTokenLifetime":3600}'
auth_agent_notifications >/dev/null
auth_agent_sign "$issuer/userinfo" >/dev/null 2>>"$errlog"
check "sign inside the refresh window emits tokenRefreshed" contains "$(auth_agent_notifications)" '"method":"tokenRefreshed"'

echo "# errors"
out=$(auth_agent_call login '{"provider":"corp","credentials":{"username":"alice","password":"nope"}}' 2>&1); rc=$?
check "bad password: status 1, '1003 invalidCredentials …' on stderr" eval '((rc == 1)) && [[ $out == "1003 invalidCredentials "* ]]'
out=$(auth_agent_call login '{"provider":"corp"' 2>&1); rc=$?
check "malformed params are refused before sending" eval '((rc == 2)) && contains "$out" "not valid JSON"'
out=$(auth_agent_call exit '{}' 2>&1); rc=$?
check "a notification method is not awaited" eval '((rc == 2)) && contains "$out" "auth_agent_notify"'
out=$(auth_agent_call sign '{"request":{"url":"x"}}' 2>&1); rc=$?
check "standard errors get a reason from the table" eval '((rc == 1)) && [[ $out == "-32602 invalidParams "* ]]'

echo "# logout"
seen=()
auth_agent_call logout '{"provider":"corp"}' >/dev/null 2>>"$errlog"
check "logout: userLoggedOut(logout) reached the hook" contains "${seen[*]}" "userLoggedOut:logout"
auth_agent_call login "$login_alice" >/dev/null 2>>"$errlog"
admin fault '{"revokeAll":true}'
out=$(auth_agent_call refresh '{"provider":"corp"}' 2>&1); rc=$?
check "server-side logout: refresh fails with 1004" eval '((rc == 1)) && [[ $out == "1004 sessionExpired "* ]]'
check "server-side logout: userLoggedOut(expired) was recorded" contains "$(auth_agent_notifications)" '"reason":"expired"'

echo "# timeouts and a dying agent"
auth_agent_call login "$login_alice" >/dev/null 2>>"$errlog"
admin fault '{"latencyMs":2500}'
start=$SECONDS
out=$(AUTH_AGENT_TIMEOUT=1 auth_agent_call refresh '{"provider":"corp"}' 2>&1); rc=$?
check "a slow call times out with status 2 and says so" eval '((rc == 2)) && contains "$out" "no answer to refresh within 1s"'
check "the next call skips the stale answer" test "$(auth_agent_call ping '{}')" = '{}'
# Bash's own "Killed" job report goes to the log, not the test output.
{
  (sleep 0.5; kill -KILL "$AUTH_AGENT_PID") &
  start=$SECONDS
  out=$(auth_agent_call refresh '{"provider":"corp"}' 2>&1); rc=$?
  check "killed mid-request: status 2, clear message, no hang" \
    eval '((rc == 2 && SECONDS - start < 5)) && contains "$out" "the agent exited before answering refresh"'
  out=$(auth_agent_call ping '{}' 2>&1); rc=$?
} 2>>"$tmp/jobs.log"
check "after that, calls fail at once" eval '((rc == 2)) && contains "$out" "not running"'
check "the agent can be started again" eval 'auth_agent_start --config "$config" && [[ $(auth_agent_call ping) == "{}" ]]'
start=$SECONDS
check "poll returns at once when nothing is pending" eval 'auth_agent_poll && ((SECONDS - start < 2))'
auth_agent_stop
admin fault '{"latencyMs":0}'

check "no token or secret ever reached stderr" eval '! grep -qE "eyJ|wonderland" "$errlog"'

echo "# the README's first example, as written"
example=$(awk '/^```bash$/ {inside = 1; next} inside && /^```$/ {exit} inside' "$here/README.md")
out=$(cd "$root" && printf 'alice\nwonderland\n' |
  AUTH_AGENT_CONFIG=$config API_URL=$issuer AUTH_AGENT_ON_NOTIFICATION= timeout 30 "$BASH" -c "$example" 2>&1); rc=$?
check "it runs and exits 0" test "$rc" -eq 0
check "its signed curl got the user" contains "$out" '"preferred_username":"alice"'
check "its hook reacted to userLoggedOut" contains "$out" "logged out of corp: log in again"
((rc == 0)) || printf '%s\n' "$out" | sed 's/^/    /'

echo "$passed passed, $failed failed"
((failed == 0))

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
count() { curl -sf "$issuer/_admin/stats" | jq -r --arg k "$1" '.counts[$k] // 0'; }
# Tokens issued under GRANT:USER or GRANT:USER:SHAPE, e.g. refresh_token:bob.
grants() { curl -sf "$issuer/_admin/grants" | jq -r --arg k "$1" '.grants[$k] // 0'; }

config=$tmp/config.json
jq -n --arg iss "$issuer" '{
  refreshWindowSeconds: 60,
  store: {kind: "memory"},
  providers: [{id: "corp", displayName: "Corp", flow: "password", origins: [$iss],
    tokenEndpoint: "\($iss)/token", revocationEndpoint: "\($iss)/revoke",
    userinfoEndpoint: "\($iss)/userinfo", clientId: "cli", scopes: ["read", "write"]}]}' >"$config"
login_alice='{"provider":"corp","credentials":{"username":"alice","password":"wonderland"}}'
login_bob='{"provider":"corp","credentials":{"username":"bob","password":"builder"}}'
# The claims of one of the dev issuer's JWT access tokens.
claims() { jq -R 'split(".")[1] | gsub("-"; "+") | gsub("_"; "/") | @base64d | fromjson' <<<"$1"; }

echo "# names match schema/openrpc.json"
missing=$(jq -r '.methods[].name' "$schema" | while read -r m; do [[ -n ${AUTH_AGENT_METHODS[$m]:-} ]] || echo "$m"; done)
check "every schema method is in AUTH_AGENT_METHODS${missing:+ (missing: $missing)}" test -z "$missing"
wrong=$(jq -r '.methods[] | "\(.name) \(if .["x-notification"] then "notification" else "request" end)"' "$schema" |
  while read -r m kind; do [[ ${AUTH_AGENT_METHODS[$m]:-} == "$kind" ]] || echo "$m"; done)
check "requests and notifications are told apart${wrong:+ (wrong: $wrong)}" test -z "$wrong"
missing=$(jq -r '.["x-notifications"][].name' "$schema" | while read -r n; do contains " ${AUTH_AGENT_EVENTS[*]} " " $n " || echo "$n"; done)
check "every schema notification is in AUTH_AGENT_EVENTS${missing:+ (missing: $missing)}" test -z "$missing"
missing=$(jq -r '.["x-host-requests"][].name' "$schema" | while read -r n; do contains " ${AUTH_AGENT_REQUESTS[*]} " " $n " || echo "$n"; done)
check "every schema agent-to-host request is in AUTH_AGENT_REQUESTS${missing:+ (missing: $missing)}" test -z "$missing"
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

echo "# auth_agent_curl and auth_agent_token"
# A curl that records its argv, to show the token never is an argument.
mkdir -p "$tmp/shim"
printf '#!/usr/bin/env bash\nprintf "%%s\\n" "$*" >>"%s"\nexec %q "$@"\n' "$tmp/curl-argv" "$(command -v curl)" >"$tmp/shim/curl"
chmod +x "$tmp/shim/curl"
real_path=$PATH
# A fresh agent: the refreshes here would trip the one before's refresh limit.
auth_agent_start --config "$config"
auth_agent_call login "$login_alice" >/dev/null 2>>"$errlog"
PATH=$tmp/shim:$PATH
admin reset '{}'
me=$(auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog"); rc=$?
check "a signed request gets the user" eval '((rc == 0)) && [[ $(jq -r .sub <<<"$me") == alice ]]'
admin reset '{}'
admin fault '{"rejectApi":1}'
me=$(auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog"); rc=$?
check "401 -> refresh -> 200: status 0, one body, the user" eval '((rc == 0)) && [[ $(jq -r .sub <<<"$me") == alice ]]'
check "401 -> refresh -> 200: one refresh, two API calls" eval '[[ $(count token.refresh_token) == 1 && $(count api) == 2 ]]'
admin reset '{}'
admin fault '{"rejectApi":2}'
out=$(auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog"); rc=$?
check "401 twice: curl's --fail status 22, refreshed once, sent twice, never a third time" \
  eval '((rc == 22)) && [[ -z $out && $(count token.refresh_token) == 1 && $(count api) == 2 ]]'
admin reset '{}'
admin fault '{"rejectApi":2}'
out=$(auth_agent_curl -s -w '%{http_code}' "$issuer/api/me" 2>>"$errlog"); rc=$?
check "401 twice without --fail: only the second answer is printed" eval '((rc == 0)) && [[ $out == *"}401" && $(grep -o invalid_token <<<"$out" | wc -l) == 1 ]]'
admin reset '{}'
admin fault '{"rejectApi":1}'
out=$(auth_agent_curl -sf -H 'Content-Type: text/plain' -d payload "$issuer/api/echo" 2>>"$errlog"); rc=$?
check "a POST body is sent again after the refresh" eval '((rc == 0)) && [[ $(jq -r .method,.body <<<"$out" | paste -sd " ") == "POST payload" ]]'
out=$(auth_agent_curl -s -o "$tmp/me.json" -w '%{http_code}' "$issuer/api/me" 2>>"$errlog"); rc=$?
check "-o writes the body where asked" eval '((rc == 0)) && [[ $out == 200 && $(jq -r .sub "$tmp/me.json") == alice ]]'
check "the token was never in curl's argv" eval '[[ -s $tmp/curl-argv ]] && ! grep -qE "Bearer|eyJ" "$tmp/curl-argv"'
rm -f "$tmp/curl-argv"
out=$(auth_agent_curl -s "http://127.0.0.1:9/unrelated" 2>&1); rc=$?
check "an uncovered URL goes out unsigned (here: nothing listens, curl's 7)" eval '((rc == 7)) && [[ -z $(grep -E "Bearer|Authorization" "$tmp/curl-argv") ]]'
token=$(auth_agent_token corp 2>>"$errlog"); rc=$?
check "auth_agent_token prints a token the API accepts" \
  eval '((rc == 0)) && [[ $(curl -sf -H @- "$issuer/api/me" <<<"Authorization: Bearer $token" | jq -r .sub) == alice ]]'
unset token
auth_agent_call logout '{"provider":"corp"}' >/dev/null 2>>"$errlog"
rm -f "$tmp/curl-argv"
auth_agent_curl -sf "$issuer/api/me" >/dev/null 2>"$tmp/curl-err"; rc=$?
check "not logged in: status 1, nothing sent, AUTH_AGENT_ERROR_CODE/REASON say why" \
  eval '((rc == 1)) && [[ ! -e $tmp/curl-argv && $AUTH_AGENT_ERROR_CODE == 1001 && $AUTH_AGENT_ERROR_REASON == notLoggedIn ]] && contains "$(<"$tmp/curl-err")" "1001 notLoggedIn"'
out=$(auth_agent_token corp 2>/dev/null); rc=$?
check "auth_agent_token fails the same way" eval '((rc == 1)) && [[ -z $out ]]'
PATH=$real_path
auth_agent_call ping >/dev/null
check "a successful call clears the error variables" eval '[[ -z $AUTH_AGENT_ERROR_CODE && -z $AUTH_AGENT_ERROR_REASON ]]'
out=$(auth_agent_call refresh '{"provider":"corp"}' 2>/dev/null)
check "after a failure inside \$(...), auth_agent_last_error sets them" \
  eval '[[ $(auth_agent_last_error) == "1001 notLoggedIn" ]] && auth_agent_last_error >/dev/null && [[ $AUTH_AGENT_ERROR_REASON == notLoggedIn ]]'
auth_agent_stop

echo "# accounts and shaped tokens"
auth_agent_start --config "$config"
admin reset '{}'
auth_agent_call subscribe '{"events":["userLoggedIn","userLoggedOut","tokenRefreshed"]}' >/dev/null 2>>"$errlog"
auth_agent_call login "$login_alice" >"$tmp/login-alice" 2>>"$errlog"
auth_agent_call login "$login_bob" >"$tmp/login-bob" 2>>"$errlog"
check "a second user's login adds an account; each login names its account" \
  eval '[[ $(jq -r .account "$tmp/login-alice") == alice && $(jq -r .account "$tmp/login-bob") == bob ]]'
check "userLoggedIn names the account" contains "$(auth_agent_notifications)" '"account":"bob"'
status=$(auth_agent_call status 2>>"$errlog")
check "status lists both accounts, the first logged in the default" \
  test "$(jq -c '[.providers[0].accounts[] | [.id, .default]] | sort' <<<"$status")" = '[["alice",true],["bob",false]]'
me=$(AUTH_AGENT_ACCOUNT=bob auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog")
check "AUTH_AGENT_ACCOUNT picks auth_agent_curl's account" test "$(jq -r .sub <<<"$me")" = bob
me=$(AUTH_AGENT_ACCOUNT=Bob auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog")
check "an account is named by its user's name, whatever its case" test "$(jq -r .sub <<<"$me")" = bob
login=$(printf 'bob\nbuilder\n' | auth_agent_login corp password 2>>"$errlog")
check "auth_agent_login PROVIDER FLOW logs in through that flow" test "$(jq -r .account <<<"$login")" = bob
check "status names the default flow and lists the flows" \
  test "$(jq -c '.providers[0] | [.flow, .flows]' <<<"$status")" = '["password",["password"]]'
me=$(auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog")
check "without it, the default account" test "$(jq -r .sub <<<"$me")" = alice
admin fault '{"rejectApi":1}'
me=$(AUTH_AGENT_ACCOUNT=bob auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog"); rc=$?
check "401 -> refresh -> 200 as AUTH_AGENT_ACCOUNT: the resend is bob's, one refresh, of bob's token" \
  eval '((rc == 0)) && [[ $(jq -r .sub <<<"$me") == bob && $(count token.refresh_token) == 1 && $(grants refresh_token:bob) == 1 ]]'
token=$(AUTH_AGENT_ACCOUNT=bob AUTH_AGENT_SCOPES=read auth_agent_token corp 2>>"$errlog")
check "auth_agent_token with AUTH_AGENT_ACCOUNT and AUTH_AGENT_SCOPES: bob's read-only token" \
  test "$(claims "$token" | jq -c '[.sub, .scope]')" = '["bob","read"]'
headers=$(AUTH_AGENT_SCOPES=read auth_agent_sign "$issuer/api/me" 2>>"$errlog")
check "auth_agent_sign with AUTH_AGENT_SCOPES: alice's read-only token" \
  test "$(claims "${headers#Authorization: Bearer }" | jq -c '[.sub, .scope]')" = '["alice","read"]'
token=$(auth_agent_token corp 2>>"$errlog")
check "without a shape, the token of the login's scopes" test "$(claims "$token" | jq -r .scope)" = "read write"
unset token headers
out=$(AUTH_AGENT_SCOPES=admin auth_agent_curl -sf "$issuer/api/me" 2>&1); rc=$?
check "a scope the server refuses: status 1, 1013 scopeNotGranted, nothing sent" \
  eval '((rc == 1)) && [[ $out == "1013 scopeNotGranted "* && $(auth_agent_last_error) == "1013 scopeNotGranted" ]]'
me=$(auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog")
check "after 1013 the account is still logged in" test "$(jq -r .sub <<<"$me")" = alice
# The issuer's /api/token describes the token it was sent.
described=$(AUTH_AGENT_ACCOUNT=bob AUTH_AGENT_RESOURCE=https://files.example.com auth_agent_curl -sf "$issuer/api/token" 2>>"$errlog")
check "AUTH_AGENT_RESOURCE: auth_agent_curl sends a token for that resource" \
  test "$(jq -c '[.sub, .resource]' <<<"$described")" = '["bob","https://files.example.com"]'
described=$(AUTH_AGENT_AUDIENCE=files auth_agent_curl -sf "$issuer/api/token" 2>>"$errlog")
check "AUTH_AGENT_AUDIENCE: auth_agent_curl sends a token for that audience" \
  test "$(jq -c '[.sub, .audience]' <<<"$described")" = '["alice","files"]'
out=$(AUTH_AGENT_RESOURCE=https://unknown.example.com auth_agent_token corp 2>&1); rc=$?
check "an unknown resource: 1013 with the server's description" \
  eval '((rc == 1)) && [[ $out == "1013 scopeNotGranted "* ]] && contains "$out" "unknown resource"'
# A fresh agent: the shaped tokens above came from refreshes, and more would trip the refresh limit.
auth_agent_stop
auth_agent_start --config "$config"
auth_agent_call subscribe '{"events":["userLoggedIn","userLoggedOut"]}' >/dev/null 2>>"$errlog"
auth_agent_call login "$login_alice" >/dev/null 2>>"$errlog"
auth_agent_call login "$login_bob" >/dev/null 2>>"$errlog"
selected=$(auth_agent_select_account corp bob 2>>"$errlog" | jq -c '[.provider, .account]')
me=$(auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog")
check "auth_agent_select_account: this agent's requests go out as bob" \
  eval '[[ $selected == "[\"corp\",\"bob\"]" && $(jq -r .sub <<<"$me") == bob ]]'
selected=$(auth_agent_select_account corp 2>>"$errlog" | jq -c '[.provider, .account]')
me=$(auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog")
check "auth_agent_select_account without an account: back to the default" \
  eval '[[ $selected == "[\"corp\",null]" && $(jq -r .sub <<<"$me") == alice ]]'
auth_agent_set_default_account corp bob >/dev/null 2>>"$errlog"
me=$(auth_agent_curl -sf "$issuer/api/me" 2>>"$errlog")
check "auth_agent_set_default_account: bob is the default" \
  eval '[[ $(jq -r .sub <<<"$me") == bob && $(auth_agent_call status | jq -r ".providers[0].accounts[] | select(.default) | .id") == bob ]]'
out=$(auth_agent_complete_login nope "http://127.0.0.1:1/callback?code=x&state=y" 2>&1); rc=$?
check "auth_agent_complete_login naming no waiting login: status 1, -32602 invalidParams" \
  eval '((rc == 1)) && [[ $out == "-32602 invalidParams "* ]] && contains "$out" "no browser login waits"'
out=$(auth_agent_select_account corp carol 2>&1); rc=$?
check "an account that is not logged in: status 1, 1001 notLoggedIn" eval '((rc == 1)) && [[ $out == "1001 notLoggedIn "* ]]'
auth_agent_notifications >/dev/null
AUTH_AGENT_ACCOUNT=alice auth_agent_logout corp >/dev/null 2>>"$errlog"
left=$(auth_agent_call status 2>>"$errlog" | jq -c '[.providers[0].accounts[].id]')
events=$(auth_agent_notifications | jq -r 'select(.method == "userLoggedOut") | "\(.params.account) \(.params.reason)"')
check "auth_agent_logout with AUTH_AGENT_ACCOUNT logs out that account only; the event names it" \
  eval '[[ $left == "[\"bob\"]" && $events == "alice logout" ]]'
auth_agent_call login "$login_alice" >/dev/null 2>>"$errlog"
auth_agent_logout corp --all >/dev/null 2>>"$errlog"
left=$(auth_agent_call status 2>>"$errlog" | jq -c '[.providers[0].state, .providers[0].accounts]')
events=$(auth_agent_notifications | jq -r 'select(.method == "userLoggedOut") | .params.account' | sort | paste -sd " ")
check "auth_agent_logout --all logs out every account" eval '[[ $left == "[\"loggedOut\",[]]" && $events == "alice bob" ]]'
out=$(auth_agent_logout corp --every 2>&1); rc=$?
check "auth_agent_logout refuses an unknown option" eval '((rc == 2)) && contains "$out" "usage: auth_agent_logout"'
auth_agent_stop

echo "# auth_agent_connect: the socket agent"
sock=$tmp/run/agent.sock
AUTH_AGENT_CONFIG=$config "$bin" serve --socket "$sock" </dev/null >/dev/null 2>>"$errlog" &
server=$!
for _ in {1..100}; do [[ -S $sock ]] && break; sleep 0.05; done
AUTH_AGENT_SOCK=$sock AUTH_AGENT_CONFIG=/nonexistent/config.json "$bin" login corp --username alice --password-stdin <<<wonderland >/dev/null 2>>"$errlog"
export AUTH_AGENT_SOCK=$sock
auth_agent_connect >/dev/null 2>>"$errlog"
token=$(auth_agent_token corp 2>>"$errlog")
auth_agent_stop
unset AUTH_AGENT_SOCK
check "auth_agent_connect: the token of a login made through the socket agent by another tool" eval '[[ -n $token ]]'
kill "$server" 2>/dev/null; wait "$server" 2>/dev/null

check "no token or secret ever reached stderr" eval '! grep -qE "eyJ|wonderland" "$errlog"'

echo "# the EXIT trap and the hook's stdout"
out=$("$BASH" -c 'source "$1"; trap "echo earlier trap ran" EXIT; auth_agent_start --config "$2" || exit 9
  echo "$AUTH_AGENT_PID $AUTH_AGENT_DIR"' _ "$here/auth-agent.sh" "$config" 2>>"$errlog"); rc=$?
read -r pid dir <<<"$out"
check "exiting stops the agent, removes its files, and runs the EXIT trap set before" \
  eval '((rc == 0)) && [[ -n $pid && ! -e $dir ]] && ! kill -0 "$pid" 2>/dev/null && contains "$out" "earlier trap ran"'
out=$("$BASH" -c 'source "$1"; hook() { echo "hook: $1"; }; AUTH_AGENT_ON_NOTIFICATION=hook
  auth_agent_start --config "$2"; auth_agent_call subscribe "{}" >/dev/null
  result=$(auth_agent_call login "$3"); echo "result: $(jq -r .provider <<<"$result")"' \
  _ "$here/auth-agent.sh" "$config" "$login_alice" 2>>"$errlog")
check "the hook prints to stdout, not into a result captured by \$(...)" \
  eval '[[ $out == *"hook: userLoggedIn"* && $out == *"result: corp"* && $out != *"result: "*"hook"* ]]'
out=$("$BASH" -c 'source "$1"; hook() { echo "hook: $1"; }; AUTH_AGENT_ON_NOTIFICATION=hook AUTH_AGENT_HOOK_STDOUT=/dev/stderr
  auth_agent_start --config "$2"; auth_agent_call subscribe "{}" >/dev/null; auth_agent_call login "$3" >/dev/null' \
  _ "$here/auth-agent.sh" "$config" "$login_alice" 2>"$tmp/hook-err")
check "AUTH_AGENT_HOOK_STDOUT sends it elsewhere" eval '[[ -z $out ]] && contains "$(<"$tmp/hook-err")" "hook: userLoggedIn"'
"$BASH" -c 'source "$1"; auth_agent_start --config "$2" && exit 5' _ "$here/auth-agent.sh" "$config" 2>>"$errlog"; rc=$?
check "the trap keeps the script's exit status" test "$rc" -eq 5

echo "# APIs the agent learns (issue 22), against a stand-in that echoes what it is sent"
auth_agent_stop
check "the stand-in starts" auth_agent_start --bin "$here/echo-agent.sh"
out=$(auth_agent_login https://api.example.com/mcp 2>>"$errlog")
check "login URL sends {resource} and prints the learned provider" \
  eval '[[ $(jq -c .echo.params <<<"$out") == '"'"'{"resource":"https://api.example.com/mcp"}'"'"' && $(jq -r .provider <<<"$out") == api.example.com ]]'
out=$(auth_agent_login https://api.example.com/mcp deviceCode 2>>"$errlog")
check "login URL FLOW sends the flow" test "$(jq -c .echo.params <<<"$out")" = '{"resource":"https://api.example.com/mcp","flow":"deviceCode"}'
out=$(auth_agent_fetch GET https://api.example.com/mcp 2>>"$errlog")
check "fetch prints the result with the login hint" \
  eval '[[ $(jq -r .status,.login.resource <<<"$out" | paste -sd " ") == "401 https://api.example.com/mcp" && $(jq -c .echo.params.login <<<"$out") == null ]]'
out=$(auth_agent_fetch --login-if-needed GET https://api.example.com/mcp 2>>"$errlog")
check "fetch --login-if-needed sends login: ifNeeded" test "$(jq -r .echo.params.login <<<"$out")" = ifNeeded
out=$(auth_agent_fetch GET 2>&1); rc=$?
check "fetch without METHOD and URL: status 2 and the usage" eval '((rc == 2)) && contains "$out" "usage: auth_agent_fetch"'
out=$(auth_agent_forget api.example.com 2>>"$errlog")
check "forget sends the provider and prints {forgotten, revoked}" \
  test "$(jq -c '[.forgotten, .revoked, .echo.params]' <<<"$out")" = '[true,true,{"provider":"api.example.com"}]'
auth_agent_stop

echo "# the real agent learns the dev issuer's API (issue 22)"
echo '{"store":{"kind":"memory"}}' >"$tmp/empty.json"
admin fault '{"autoApprove":"alice"}'
# Plays the browser: the issuer approves at once and redirects to the agent's listener.
play_browser() { [[ $1 == loginPrompt ]] && { curl -sfL -o /dev/null "$(jq -r .url <<<"$2")" & } ; return 0; }
check "the agent starts with no providers" auth_agent_start --config "$tmp/empty.json"
out=$(auth_agent_fetch GET "$issuer/mcp" 2>>"$errlog")
check "fetch: 401 and the login hint" test "$(jq -r '[.status, .login.resource] | join(" ")' <<<"$out")" = "401 $issuer/mcp"
out=$(AUTH_AGENT_ON_NOTIFICATION=play_browser auth_agent_login "$issuer/mcp" 2>>"$errlog"); rc=$?
learned=$(jq -r .provider <<<"$out" 2>/dev/null)
check "login URL learns the API and logs in" eval '((rc == 0)) && [[ -n $learned && $learned != null ]]'
out=$(auth_agent_fetch GET "$issuer/mcp" 2>>"$errlog")
check "fetch is signed by the learned provider" \
  test "$(jq -r '[.status, .provider, (.body | fromjson | .sub)] | join(" ")' <<<"$out")" = "200 $learned alice"
out=$(AUTH_AGENT_ON_NOTIFICATION=play_browser auth_agent_fetch --login-if-needed GET "$issuer/mcp/admin" 2>>"$errlog")
check "fetch --login-if-needed steps up to the admin scope" \
  test "$(jq -r '[.status, (.body | fromjson | .scope)] | join(" ")' <<<"$out")" = "200 mcp offline_access admin"
out=$(auth_agent_forget "$learned" 2>>"$errlog")
check "forget removes it" eval '[[ $(jq -r .forgotten <<<"$out") == true && $(auth_agent_call status | jq -c .providers) == "[]" ]]'
admin fault '{"discovery":"wrong-resource"}'
out=$(auth_agent_login "$issuer/mcp" 2>&1); rc=$?
check "a wrong resource in the metadata: status 1, 1014 discoveryFailed" eval '((rc == 1)) && [[ $out == "1014 discoveryFailed "* ]]'
admin reset '{}'
auth_agent_stop

echo "# presentLogin: the script presents its logins (issue 34), against a stand-in that asks"
check "the stand-in starts; without AUTH_AGENT_PRESENT_LOGIN nothing is declared" \
  eval 'auth_agent_start --bin "$here/asking-agent.sh" && [[ $(auth_agent_call initialize "{}" | jq -c .echo) == "{}" ]]'
out=$(auth_agent_call login '{"provider":"presentLogin"}' 2>>"$errlog")
check "presentLogin without a presenter: answered -32601" test "$(jq -r .answer.error.code <<<"$out")" = -32601
auth_agent_stop
presenter_saw=$tmp/presenter-params
remember() { printf '%s\n' "$1" >"$presenter_saw"; echo '{"redirectUrl":"http://127.0.0.1:1/callback?code=c&state=s"}'; }
ASKING_AGENT_LOG=$tmp/asked AUTH_AGENT_PRESENT_LOGIN=remember auth_agent_start --bin "$here/asking-agent.sh" 2>>"$errlog"
check "with AUTH_AGENT_PRESENT_LOGIN, auth_agent_start declares the capability in initialize, its first call" \
  test "$(head -n 1 "$tmp/asked" | jq -c '[.method, .params.capabilities]')" = '["initialize",{"presentLogin":true}]'
out=$(AUTH_AGENT_PRESENT_LOGIN=remember auth_agent_call login '{"provider":"presentLogin"}' 2>>"$errlog")
check "the presenter gets the params; what it prints is the answer" \
  eval '[[ $(jq -c .answer <<<"$out") == '"'"'{"jsonrpc":"2.0","id":"agent-1","result":{"redirectUrl":"http://127.0.0.1:1/callback?code=c&state=s"}}'"'"' && $(jq -r .kind "$presenter_saw") == browser ]]'
out=$(AUTH_AGENT_PRESENT_LOGIN=false auth_agent_call login '{"provider":"presentLogin"}' 2>"$tmp/present-err")
check "a presenter that fails answers an error (-32603) and says so" \
  eval '[[ $(jq -r .answer.error.code <<<"$out") == -32603 ]] && contains "$(<"$tmp/present-err")" "did not present the login"'
out=$(AUTH_AGENT_PRESENT_LOGIN=remember auth_agent_call login '{"provider":"askSomethingNew"}' 2>>"$errlog")
check "a request the client does not know: answered -32601, and the calls go on" \
  eval '[[ $(jq -r .answer.error.code <<<"$out") == -32601 && $(auth_agent_call ping) == "{}" ]]'
auth_agent_stop

echo "# presentLogin against the real agent: a browser and a device login of the dev issuer"
admin fault '{"autoApprove":"alice","deviceInterval":1}'
jq -n --arg iss "$issuer" '{store: {kind: "memory"}, providers: [
  {id: "web", displayName: "Web", flow: "authorizationCode", issuer: $iss, clientId: "cli", origins: [$iss]},
  {id: "device", displayName: "Device", flow: "deviceCode", issuer: $iss, clientId: "cli",
   origins: [$iss | sub("127\\.0\\.0\\.1"; "localhost")]}]}' >"$tmp/interactive.json"
# The fake opener is the person: a browser the issuer approves at once, or the device page approved as alice.
cat >"$tmp/opener" <<'OPENER'
#!/usr/bin/env bash
echo "$1" >>"${0%/*}/opened"
case $1 in
  */device\?user_code=*) curl -sf -o /dev/null --data-urlencode "user_code=${1#*user_code=}" -d username=alice \
                           -d password=wonderland -d action=approve "${1%%\?*}" ;;
  *) curl -sfL -o /dev/null "$1" ;;
esac
OPENER
chmod +x "$tmp/opener"
export AUTH_AGENT_OPENER=$tmp/opener
AUTH_AGENT_PRESENT_LOGIN=auth_agent_present_login
auth_agent_start --config "$tmp/interactive.json" 2>>"$errlog"
auth_agent_notifications >/dev/null
out=$(auth_agent_call login '{"provider":"web","openBrowser":false}' 2>"$tmp/present-err"); rc=$?
check "auth_agent_present_login prints the URL, opens it, and the browser login completes with no loginPrompt" \
  eval '((rc == 0)) && [[ $(jq -r .user.sub <<<"$out") == alice && $(<"$tmp/opened") == "$issuer/authorize"* ]] &&
    contains "$(<"$tmp/present-err")" "To log in to Web, open $issuer/authorize" && ! contains "$(auth_agent_notifications)" loginPrompt'
out=$(auth_agent_call login '{"provider":"device"}' 2>"$tmp/present-err"); rc=$?
check "it shows the device code, opens the page, and the device login completes" \
  eval '((rc == 0)) && [[ $(jq -r .user.sub <<<"$out") == alice ]] && contains "$(<"$tmp/present-err")" "To log in to Device, enter the code "'
paste_back() { jq -n --arg u "$(curl -s -o /dev/null -w '%{redirect_url}' "$(jq -r .url <<<"$1")")" '{redirectUrl: $u}'; }
out=$(AUTH_AGENT_PRESENT_LOGIN=paste_back auth_agent_call login '{"provider":"web","openBrowser":false}' 2>>"$errlog"); rc=$?
check "a presenter that hands back the redirect completes the login" eval '((rc == 0)) && [[ $(jq -r .provider <<<"$out") == web ]]'
decline() { echo '{"cancelled":true}'; }
out=$(AUTH_AGENT_PRESENT_LOGIN=decline auth_agent_call login '{"provider":"web","openBrowser":false}' 2>&1); rc=$?
check "a presenter that answers cancelled ends the login: status 1, -32800" eval '((rc == 1)) && [[ $out == "-32800 requestCancelled "* ]]'
too_late() { touch "$tmp/asked-too-late"; sleep 11; echo '{"opened":true}'; }
auth_agent_notifications >/dev/null
start=$SECONDS
out=$(AUTH_AGENT_PRESENT_LOGIN=too_late AUTH_AGENT_ON_NOTIFICATION=play_browser auth_agent_call login '{"provider":"web","openBrowser":false}' 2>>"$errlog"); rc=$?
check "a presenter that does not answer within 10 s: the agent sends loginPrompt, and the login completes through it" \
  eval '((rc == 0)) && [[ $(jq -r .provider <<<"$out") == web ]] && [[ -e $tmp/asked-too-late ]] &&
    contains "$(auth_agent_notifications)" "\"method\":\"loginPrompt\"" && ((SECONDS - start < 20))'
auth_agent_stop
unset AUTH_AGENT_PRESENT_LOGIN
auth_agent_start --config "$tmp/interactive.json" 2>>"$errlog"
out=$(AUTH_AGENT_ON_NOTIFICATION=play_browser auth_agent_call login '{"provider":"web","openBrowser":false}' 2>>"$errlog"); rc=$?
check "without AUTH_AGENT_PRESENT_LOGIN: loginPrompt as before" \
  eval '((rc == 0)) && contains "$(auth_agent_notifications)" "\"method\":\"loginPrompt\""'
auth_agent_stop
unset AUTH_AGENT_OPENER
admin reset '{}'

echo "# the README's first example, as written, against auth-agent demo"
example=$(awk '/^```bash$/ {inside = 1; next} inside && /^```$/ {exit} inside' "$here/README.md")
# The README's clone is ~/src/auth-agent; this one is $root (ClientInstallTests runs it from a real ~).
example=${example//'~/src/auth-agent'/$root}
out=$(cd "$root" && printf 'alice\nwonderland\n' |
  env -u AUTH_AGENT_CONFIG AUTH_AGENT_ON_NOTIFICATION= timeout 30 "$BASH" -c "$example" 2>"$tmp/example-err"); rc=$?
check "it runs and exits 0" test "$rc" -eq 0
check "its auth_agent_curl got the user from the demo's API" contains "$out" '"preferred_username":"alice"'
check "its hook reacted to userLoggedOut, on stdout" contains "$out" "logged out of demo: log in again"
((rc == 0)) || { printf '%s\n' "$out"; cat "$tmp/example-err"; } | sed 's/^/    /'

echo "$passed passed, $failed failed"
((failed == 0))

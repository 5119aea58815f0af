# auth-agent.sh: talk to a long-lived auth-agent from bash (4+).
#
#   source clients/bash/auth-agent.sh
#   auth_agent_start --config ~/.config/auth-agent/config.json
#   auth_agent_call login '{"provider":"corp","credentials":{...}}'
#   auth_agent_curl -sf "$url"     # signed; after a 401: refresh, resend once
#   AUTH_AGENT_ACCOUNT=bob auth_agent_curl -sf "$url"   # as another account
#   auth_agent_stop                 # or let the EXIT trap do it
#
# The agent runs as a coprocess and speaks JSON-RPC 2.0, one message per line.
# Calls are sequential: one caller reads the agent's output at a time. Calls
# may run inside $(...), so everything that must outlive a call (the id
# counter, received notifications) lives in files under $AUTH_AGENT_DIR
# rather than in shell variables, which a subshell cannot hand back.
#
# Return codes: 0 success, 1 the agent answered with an error, 2 no answer
# (agent not running, exited, timed out, jq missing, bad arguments). After a
# failure AUTH_AGENT_ERROR_CODE and AUTH_AGENT_ERROR_REASON say which.

# The protocol's names, mirrored from schema/openrpc.json (test.sh checks them).
# Methods map to "request" or "notification" (no answer is sent for those).
declare -gA AUTH_AGENT_METHODS=(
  [initialize]=request [ping]=request [shutdown]=request [status]=request
  [login]=request [logout]=request [selectAccount]=request [setDefaultAccount]=request [completeLogin]=request
  [sign]=request [fetch]=request [forget]=request
  [refresh]=request [token]=request [subscribe]=request [unsubscribe]=request
  [exit]=notification ['$/cancelRequest']=notification
)
# Agent-to-host notifications. loginPrompt goes to the host whose device-code or
# browser login is waiting, subscribed or not.
declare -ga AUTH_AGENT_EVENTS=(userLoggedIn userLoggedOut tokenRefreshed providersChanged loginPrompt loginWaiting)
# Agent-to-host requests (ids like "agent-3"); each is answered: presentLogin by
# $AUTH_AGENT_PRESENT_LOGIN when set, the others (and presentLogin without it)
# with -32601. loginFields goes only to hosts that declare it, which this one does not.
declare -ga AUTH_AGENT_REQUESTS=(loginFields presentLogin)
# Error codes to reasons, used when an error carries no data.reason.
declare -gA AUTH_AGENT_ERRORS=(
  [-32700]=parseError [-32600]=invalidRequest [-32601]=methodNotFound
  [-32602]=invalidParams [-32603]=internalError [-32800]=requestCancelled
  [1001]=notLoggedIn [1002]=unknownProvider [1003]=invalidCredentials
  [1004]=sessionExpired [1005]=authServerUnavailable [1006]=originNotAllowed
  [1007]=excessiveRefresh [1008]=loginDenied [1009]=loginTimedOut
  [1010]=storeUnavailable [1011]=requestFailed [1012]=responseTooLarge
  [1013]=scopeNotGranted [1014]=discoveryFailed [1015]=notAllowed
  [1016]=configurationInvalid
)

# AUTH_AGENT_PRESENT_LOGIN: set before auth_agent_start to present this
# script's interactive logins itself: the name of a function or command the
# agent's presentLogin request is handed to, its params JSON as $1; it prints
# the answer ({"opened":true}, {"redirectUrl":URL} or {"cancelled":true}) on
# stdout; a failure or anything else answers an error, and the agent falls
# back to loginPrompt. auth_agent_present_login (below) prints the code or URL
# and opens it where there is a display. auth_agent_start then declares the
# capability in initialize. AUTH_AGENT_OPENER: the command that opens a URL
# (default: open on macOS; xdg-open with DISPLAY or WAYLAND_DISPLAY set).

# Seconds a call waits for its answer before cancelling it.
: "${AUTH_AGENT_TIMEOUT:=30}"

# Whose token and which token the helpers (auth_agent_sign, _curl, _token,
# _logout) ask for, when set: AUTH_AGENT_ACCOUNT (an account id; else the one
# selected with auth_agent_select_account, else the provider's default),
# AUTH_AGENT_SCOPES (space-separated), AUTH_AGENT_AUDIENCE, AUTH_AGENT_RESOURCE
# (RFC 8707). Set them for the script, or for one call: VAR=value auth_agent_curl ...

_auth_agent_say() { printf 'auth-agent.sh: %s\n' "$*" >&2; }

# Records a failure: in this shell's AUTH_AGENT_ERROR_CODE/REASON, and in a
# file, since a call inside $(...) cannot set its caller's variables (see
# auth_agent_last_error). CODE is empty for failures the agent never answered.
_auth_agent_fail() { # CODE REASON
  AUTH_AGENT_ERROR_CODE=$1 AUTH_AGENT_ERROR_REASON=$2
  [[ -n ${AUTH_AGENT_DIR:-} && -d $AUTH_AGENT_DIR ]] && printf '%s %s\n' "$1" "$2" >"$AUTH_AGENT_DIR/error"
  return 0
}

_auth_agent_clear_error() {
  AUTH_AGENT_ERROR_CODE= AUTH_AGENT_ERROR_REASON=
  [[ -n ${AUTH_AGENT_DIR:-} ]] && rm -f -- "$AUTH_AGENT_DIR/error"
  return 0
}

# auth_agent_last_error: sets AUTH_AGENT_ERROR_CODE and AUTH_AGENT_ERROR_REASON
# in this shell from the last failed call, also one made inside $(...), and
# prints "CODE REASON"; status 1 when the last call did not fail.
auth_agent_last_error() {
  [[ -n ${AUTH_AGENT_DIR:-} && -s $AUTH_AGENT_DIR/error ]] &&
    read -r AUTH_AGENT_ERROR_CODE AUTH_AGENT_ERROR_REASON <"$AUTH_AGENT_DIR/error"
  [[ -n ${AUTH_AGENT_ERROR_REASON:-} ]] || return 1
  printf '%s %s\n' "${AUTH_AGENT_ERROR_CODE:--}" "$AUTH_AGENT_ERROR_REASON"
}

_auth_agent_need_jq() {
  command -v jq >/dev/null 2>&1 && return 0
  _auth_agent_say "jq is required (apt-get install jq)"
  _auth_agent_fail "" jqMissing
  return 2
}

_auth_agent_running() {
  [[ -n ${_AUTH_AGENT_IN:-} && -n ${AUTH_AGENT_PID:-} ]] && kill -0 "$AUTH_AGENT_PID" 2>/dev/null
}

# auth_agent_start [--bin PATH] [--config FILE] [agent args...]
# The binary is --bin, else $AUTH_AGENT_BIN, else auth-agent on PATH.
auth_agent_start() {
  _auth_agent_need_jq || return
  if _auth_agent_running; then _auth_agent_say "already started (pid $AUTH_AGENT_PID)"; return 2; fi
  # Leftovers of an agent that died: its descriptors and directory.
  [[ -n ${AUTH_AGENT_DIR:-} ]] && auth_agent_stop
  local bin=${AUTH_AGENT_BIN:-auth-agent}
  local -a args=()
  while (($#)); do
    case $1 in
      --bin) bin=${2:?--bin needs a path}; shift 2 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  if ! command -v "$bin" >/dev/null 2>&1; then
    _auth_agent_say "agent binary not found: $bin (pass --bin, set AUTH_AGENT_BIN or put auth-agent on PATH)"
    _auth_agent_fail "" agentNotFound
    return 2
  fi
  AUTH_AGENT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/auth-agent.XXXXXX") || return 2
  AUTH_AGENT_NOTIFICATIONS_FILE=$AUTH_AGENT_DIR/notifications
  : >"$AUTH_AGENT_NOTIFICATIONS_FILE"
  echo 0 >"$AUTH_AGENT_DIR/seq"
  coproc AUTH_AGENT_PROC { exec "$bin" "${args[@]}"; }
  AUTH_AGENT_PID=$AUTH_AGENT_PROC_PID
  if [[ -z ${AUTH_AGENT_PROC[0]:-} || -z ${AUTH_AGENT_PROC[1]:-} ]]; then
    _auth_agent_say "the agent exited at once; see its message above"
    auth_agent_stop
    return 2
  fi
  # Private copies: bash closes the coproc's own descriptors as soon as it
  # reaps the process, and a later read must then see EOF, not a bad fd.
  exec {_AUTH_AGENT_OUT}<&"${AUTH_AGENT_PROC[0]}" {_AUTH_AGENT_IN}>&"${AUTH_AGENT_PROC[1]}"
  # The hook's stdout: this shell's, even when a call runs inside $(...).
  exec {_AUTH_AGENT_STDOUT}>&1
  _auth_agent_trap_exit
  # A bad config makes the agent exit at once (status 2, reason on stderr).
  # A script that presents its logins says so in initialize, the first call.
  local first=(ping '{}')
  [[ -n ${AUTH_AGENT_PRESENT_LOGIN:-} ]] &&
    first=(initialize '{"protocolVersion":"1","clientInfo":{"name":"auth-agent.sh","version":"1"},"capabilities":{"presentLogin":true}}')
  if ! auth_agent_call "${first[@]}" >/dev/null; then
    _auth_agent_say "the agent did not start; see its message above"
    auth_agent_stop
    return 2
  fi
}

# Makes the script's exit stop the agent and remove its files, keeping an EXIT
# trap set before (it runs after). A trap set after auth_agent_start replaces
# this one: call auth_agent_stop in it.
_auth_agent_trap_exit() {
  [[ ${_AUTH_AGENT_TRAPPED:-} == "$BASHPID" ]] && return 0
  local -a previous=()
  eval "previous=($(trap -p EXIT))"
  _AUTH_AGENT_PREVIOUS_EXIT_TRAP=${previous[2]:-}
  trap _auth_agent_on_exit EXIT
  _AUTH_AGENT_TRAPPED=$BASHPID
}

_auth_agent_on_exit() {
  auth_agent_stop
  if [[ -n ${_AUTH_AGENT_PREVIOUS_EXIT_TRAP:-} ]]; then eval "$_AUTH_AGENT_PREVIOUS_EXIT_TRAP"; fi
}

# Writes one line to the agent. In a subshell so that a dead agent costs a
# failed write (SIGPIPE ends only the subshell) instead of the caller's shell.
_auth_agent_send() {
  if ! _auth_agent_running; then _auth_agent_say "the agent is not running"; _auth_agent_fail "" notRunning; return 2; fi
  if ! (printf '%s\n' "$1" >&"$_AUTH_AGENT_IN") 2>/dev/null; then
    _auth_agent_say "the agent exited; could not send the request"
    _auth_agent_fail "" agentDied
    return 2
  fi
}

# Reads params JSON from stdin (never argv: credentials must not show in ps)
# and prints one compact message line.
_auth_agent_message() { # METHOD ID|"" <<<PARAMS
  jq -c --arg method "$1" --argjson id "${2:-null}" \
    '{jsonrpc: "2.0", method: $method, params: .} + (if $id == null then {} else {id: $id} end)'
}

# auth_agent_notify METHOD [PARAMS_JSON]: send a notification (no answer).
auth_agent_notify() {
  _auth_agent_need_jq || return
  local line
  line=$(_auth_agent_message "$1" "" <<<"${2:-"{}"}") || { _auth_agent_say "params for $1 are not valid JSON"; return 2; }
  _auth_agent_send "$line"
}

_auth_agent_next_id() {
  local n
  read -r n <"$AUTH_AGENT_DIR/seq"
  echo $((n + 1)) >"$AUTH_AGENT_DIR/seq"
  echo $((n + 1))
}

# Records a notification and hands it to the hook. The hook's stdout is the
# stdout auth_agent_start had (or the file AUTH_AGENT_HOOK_STDOUT names, e.g.
# /dev/stderr), never the result a call inside $(...) prints. Its status is
# ignored, so a hook ending in a false test cannot trip set -e.
_auth_agent_dispatch() { # METHOD PARAMS LINE
  printf '%s\n' "$3" >>"$AUTH_AGENT_NOTIFICATIONS_FILE"
  [[ -n ${AUTH_AGENT_ON_NOTIFICATION:-} ]] || return 0
  if [[ -n ${AUTH_AGENT_HOOK_STDOUT:-} ]]; then
    "$AUTH_AGENT_ON_NOTIFICATION" "$1" "$2" >>"$AUTH_AGENT_HOOK_STDOUT" || true
  elif [[ -n ${_AUTH_AGENT_STDOUT:-} ]]; then
    "$AUTH_AGENT_ON_NOTIFICATION" "$1" "$2" >&"$_AUTH_AGENT_STDOUT" || true
  else
    "$AUTH_AGENT_ON_NOTIFICATION" "$1" "$2" || true
  fi
}

# Answers a request from the agent, always once: presentLogin through
# $AUTH_AGENT_PRESENT_LOGIN (its stdout is the answer, its stderr the script's),
# anything else -32601. It runs while a call reads the agent's output, so a
# login's presentation happens inside auth_agent_call login / fetch.
_auth_agent_answer() { # ID_JSON METHOD PARAMS
  local answer rc=0
  if [[ $2 != presentLogin || -z ${AUTH_AGENT_PRESENT_LOGIN:-} ]]; then
    _auth_agent_send "$(jq -cn --argjson id "$1" --arg m "$2" \
      '{jsonrpc: "2.0", id: $id, error: {code: -32601, message: "this host does not handle \($m)"}}')"
    return
  fi
  answer=$("$AUTH_AGENT_PRESENT_LOGIN" "$3") || rc=$?
  if ((rc == 0)) && jq -e 'type == "object" and (has("opened") or has("redirectUrl") or has("cancelled"))' >/dev/null 2>&1 <<<"$answer"; then
    _auth_agent_send "$(jq -c --argjson id "$1" '{jsonrpc: "2.0", id: $id, result: .}' <<<"$answer")"
  else
    _auth_agent_say "$AUTH_AGENT_PRESENT_LOGIN did not present the login (status $rc); the agent prompts instead"
    _auth_agent_send "$(jq -cn --argjson id "$1" --arg h "$AUTH_AGENT_PRESENT_LOGIN" \
      '{jsonrpc: "2.0", id: $id, error: {code: -32603, message: "\($h) did not present the login"}}')"
  fi
}

# The command that opens a URL on this machine's display, if there is one.
_auth_agent_opener() {
  if [[ -n ${AUTH_AGENT_OPENER:-} ]]; then printf '%s\n' "$AUTH_AGENT_OPENER"
  elif [[ $(uname -s) == Darwin ]]; then echo open
  elif [[ -n ${DISPLAY:-}${WAYLAND_DISPLAY:-} ]] && command -v xdg-open >/dev/null 2>&1; then echo xdg-open
  else return 1
  fi
}

# auth_agent_present_login PARAMS: the presenter to set AUTH_AGENT_PRESENT_LOGIN
# to. Prints the device code and where to enter it, or the URL to open, on
# stderr, opens that URL where there is a display (AUTH_AGENT_OPENER, open,
# xdg-open), and answers {"opened":true}.
auth_agent_present_login() {
  local name kind url code opener
  IFS=$'\t' read -r name kind url code < <(jq -r '[.displayName // .provider, .kind,
    (.verificationUriComplete // .verificationUri // .url // "-"), (.userCode // "-")] | @tsv' <<<"$1")
  if [[ $kind == deviceCode ]]; then
    printf 'To log in to %s, enter the code %s at %s\n' "$name" "$code" "$(jq -r .verificationUri <<<"$1")" >&2
  else
    printf 'To log in to %s, open %s\n' "$name" "$url" >&2
  fi
  # The URL passed the agent's check (https, or http to loopback): no opener reads it as an option.
  if opener=$(_auth_agent_opener); then
    "$opener" "$url" </dev/null >/dev/null 2>&1 &
    disown 2>/dev/null || true
  fi
  echo '{"opened":true}'
}

# Classifies one received line as tab-separated fields with no empty field:
#   q ID METHOD PARAMS (the agent asks) | n METHOD PARAMS | r ID RESULT | e ID CODE REASON MESSAGE | x
_auth_agent_classify() {
  jq -r 'if has("method") and has("id") then "q\t\(.id | tojson)\t\(.method)\t\(.params // {} | tojson)"
    elif has("method") then "n\t\(.method)\t\(.params // {} | tojson)"
    elif has("error") then "e\t\(.id | tojson)\t\(.error.code)\t\(.error.data.reason // "-")\t\(.error.message | gsub("[\t\n]"; " "))"
    elif has("id") then "r\t\(.id | tojson)\t\(.result | tojson)"
    else "x" end' 2>/dev/null <<<"$1" || echo x
}

# Reads one line within TIMEOUT seconds into _AUTH_AGENT_LINE. Returns 0 for
# a line, 1 at EOF (agent gone), 2 on timeout. A partial line left by a
# timeout is kept and completed by the next read.
_auth_agent_read_line() { # TIMEOUT
  local chunk rc
  IFS= read -r -t "$1" -u "$_AUTH_AGENT_OUT" chunk
  rc=$?
  _AUTH_AGENT_PARTIAL+=$chunk
  if ((rc == 0)); then _AUTH_AGENT_LINE=$_AUTH_AGENT_PARTIAL; _AUTH_AGENT_PARTIAL=; return 0; fi
  ((rc > 128)) && return 2
  return 1
}

# auth_agent_call METHOD [PARAMS_JSON]
# Prints the result JSON; on an error prints "code reason message" to stderr
# and sets AUTH_AGENT_ERROR_CODE and AUTH_AGENT_ERROR_REASON.
auth_agent_call() {
  _auth_agent_need_jq || return
  _auth_agent_clear_error
  local method=$1 params=${2:-"{}"}
  if [[ ${AUTH_AGENT_METHODS[$method]:-} == notification ]]; then
    _auth_agent_say "$method is a notification; use auth_agent_notify"
    _auth_agent_fail "" badArguments
    return 2
  fi
  if [[ -z ${AUTH_AGENT_DIR:-} ]]; then _auth_agent_say "not started; call auth_agent_start first"; _auth_agent_fail "" notRunning; return 2; fi
  local id line
  id=$(_auth_agent_next_id)
  line=$(_auth_agent_message "$method" "$id" <<<"$params") || { _auth_agent_say "params for $method are not valid JSON"; _auth_agent_fail "" badArguments; return 2; }
  _auth_agent_send "$line" || return
  local deadline=$((SECONDS + AUTH_AGENT_TIMEOUT)) left rc kind a b c d
  while :; do
    left=$((deadline - SECONDS))
    if ((left <= 0)); then
      auth_agent_notify '$/cancelRequest' "{\"id\":$id}" 2>/dev/null
      _auth_agent_say "no answer to $method within ${AUTH_AGENT_TIMEOUT}s; cancelled it"
      _auth_agent_fail "" timeout
      return 2
    fi
    rc=0
    _auth_agent_read_line "$left" || rc=$?
    case $rc in
      1) _auth_agent_say "the agent exited before answering $method"; _auth_agent_fail "" agentDied; return 2 ;;
      2) continue ;;
    esac
    IFS=$'\t' read -r kind a b c d <<<"$(_auth_agent_classify "$_AUTH_AGENT_LINE")"
    case $kind in
      n) _auth_agent_dispatch "$a" "$b" "$_AUTH_AGENT_LINE" ;;
      q) _auth_agent_answer "$a" "$b" "$c" ;;
      r) [[ $a == "$id" ]] && { printf '%s\n' "$b"; return 0; } ;;
      e) if [[ $a == "$id" ]]; then
           [[ $c == - ]] && c=${AUTH_AGENT_ERRORS[$b]:-error}
           printf '%s %s %s\n' "$b" "$c" "$d" >&2
           _auth_agent_fail "$b" "$c"
           return 1
         fi ;;
    esac
    # Anything else is an answer to an earlier, timed-out call: dropped.
  done
}

# auth_agent_poll [SECONDS]: take in notifications that arrived while no call
# was running, waiting up to SECONDS (default 0.05) for the first one.
auth_agent_poll() {
  _auth_agent_running || { _auth_agent_say "the agent is not running"; return 2; }
  # read -t 0 only tests for input without consuming it, hence the floor.
  local wait=${1:-0.05} kind a b
  [[ $wait == 0 ]] && wait=0.05
  while _auth_agent_read_line "$wait"; do
    wait=0.05
    IFS=$'\t' read -r kind a b c <<<"$(_auth_agent_classify "$_AUTH_AGENT_LINE")"
    case $kind in
      n) _auth_agent_dispatch "$a" "$b" "$_AUTH_AGENT_LINE" ;;
      q) _auth_agent_answer "$a" "$b" "$c" ;;
    esac
  done
  return 0
}

# auth_agent_notifications: print the notifications received so far, one
# JSON message per line, and forget them.
auth_agent_notifications() {
  [[ -n ${AUTH_AGENT_NOTIFICATIONS_FILE:-} && -f $AUTH_AGENT_NOTIFICATIONS_FILE ]] || return 0
  cat "$AUTH_AGENT_NOTIFICATIONS_FILE"
  : >"$AUTH_AGENT_NOTIFICATIONS_FILE"
}

# The account and token-shape params from AUTH_AGENT_ACCOUNT, _SCOPES,
# _AUDIENCE and _RESOURCE, as a JSON object of those set (only the account
# with "account"), for jq's --argjson.
_auth_agent_choice_json() { # [account]
  jq -cn --arg account "${AUTH_AGENT_ACCOUNT:-}" --arg scopes "${AUTH_AGENT_SCOPES:-}" \
    --arg audience "${AUTH_AGENT_AUDIENCE:-}" --arg resource "${AUTH_AGENT_RESOURCE:-}" --arg only "${1:-}" '
    {account: $account}
    + if $only == "" then {scopes: ($scopes | [splits("[ \t]+")] | map(select(. != ""))), audience: $audience, resource: $resource} else {} end
    | with_entries(select(.value != "" and .value != []))'
}

# Prints sign's result JSON for URL (with the provider that signed).
_auth_agent_sign_json() { # URL METHOD [PROVIDER]
  local params
  params=$(jq -cn --arg url "$1" --arg method "$2" --arg provider "${3:-}" --argjson choice "$(_auth_agent_choice_json)" \
    '{request: {method: $method, url: $url}} + (if $provider == "" then {} else {provider: $provider} end) + $choice') || return 2
  auth_agent_call sign "$params"
}

# sign's result as "Name: value" header lines, for curl -H @-.
_auth_agent_header_lines() { jq -r '.headers | to_entries[] | "\(.key): \(.value)"'; }

# auth_agent_sign URL [METHOD] [PROVIDER]: print the headers that authorize
# the request as "Name: value" lines (nothing when no provider covers URL),
# ready for curl -H @-.
auth_agent_sign() {
  _auth_agent_need_jq || return
  local result rc=0
  result=$(_auth_agent_sign_json "${1:?auth_agent_sign URL [METHOD] [PROVIDER]}" "${2:-GET}" "${3:-}") || rc=$?
  if ((rc)); then auth_agent_last_error >/dev/null; return "$rc"; fi
  _auth_agent_header_lines <<<"$result"
}

# auth_agent_token PROVIDER: print the provider's access token (refreshed
# first when due), for tools that cannot take headers from stdin. Prefer
# auth_agent_curl: a token in argv is visible in ps.
auth_agent_token() {
  _auth_agent_need_jq || return
  local params result rc=0
  params=$(jq -cn --arg p "${1:?auth_agent_token PROVIDER}" --argjson choice "$(_auth_agent_choice_json)" '{provider: $p} + $choice')
  result=$(auth_agent_call token "$params") || rc=$?
  if ((rc)); then auth_agent_last_error >/dev/null; return "$rc"; fi
  jq -r .accessToken <<<"$result"
}

# The HTTP method curl will use for these arguments (URL excluded).
_auth_agent_curl_method() {
  local method="" implied=GET
  while (($#)); do
    case $1 in
      -X | --request) method=${2:-}; shift ;;
      -X?*) method=${1#-X} ;;
      --request=*) method=${1#--request=} ;;
      -I | --head) implied=HEAD ;;
      -G | --get) implied=GET; method=${method:-GET} ;;
      -T | --upload-file) implied=PUT; shift ;;
      -d | --data | --data-* | -F | --form | --form-string | --json) [[ $implied == GET ]] && implied=POST; shift ;;
      -d?* | -F?*) [[ $implied == GET ]] && implied=POST ;;
    esac
    shift
  done
  printf '%s\n' "${method:-$implied}"
}

# Whether the curl arguments already say where the body goes.
_auth_agent_curl_has_output() {
  local arg
  for arg; do
    case $arg in -o | --output | -o?* | --output=* | -O | --remote-name | --remote-name-all) return 0 ;; esac
  done
  return 1
}

# The status of the last response in a curl --dump-header file (none: empty).
_auth_agent_curl_status() { # HEAD_FILE
  [[ -s $1 ]] || return 0
  sed -n 's/^HTTP\/[0-9.]* \([0-9][0-9][0-9]\).*/\1/p' "$1" | tail -n 1
}

# Runs curl once with the headers of sign's result, read from stdin (-H @-),
# so the token is in no process's argv.
_auth_agent_curl_once() { # SIGNED_JSON HEAD_FILE [curl args...]
  local headers head=$2
  headers=$(_auth_agent_header_lines <<<"$1")
  shift 2
  if [[ -n $headers ]]; then
    curl -D "$head" -H @- "$@" <<<"$headers"
  else
    curl -D "$head" "$@"
  fi
}

# auth_agent_curl [curl args...] URL: curl with the request signed. When the
# answer is a 401 for the Authorization it sent, refreshes (passing it) and
# resends once; a second 401 is returned as curl returns it. The URL must be
# the last argument; curl's stdin carries the headers, so no "@-" arguments,
# and no -D (it is used to read the status). Returns curl's status, or
# auth_agent_call's when signing or the refresh failed (nothing is sent
# unsigned then).
auth_agent_curl() {
  _auth_agent_need_jq || return
  if (($# == 0)); then _auth_agent_say "usage: auth_agent_curl [curl args...] URL"; _auth_agent_fail "" badArguments; return 2; fi
  local url=${!#} method signed rc=0 status authorization provider work
  if [[ $url != http://* && $url != https://* ]]; then
    _auth_agent_say "auth_agent_curl: the last argument must be the http(s) URL, got '$url'"
    _auth_agent_fail "" badArguments
    return 2
  fi
  method=$(_auth_agent_curl_method "${@:1:$#-1}")
  signed=$(_auth_agent_sign_json "$url" "$method") || { rc=$?; auth_agent_last_error >/dev/null; return "$rc"; }
  work=$(mktemp -d "$AUTH_AGENT_DIR/curl.XXXXXX") || return 2
  # The first answer's body waits in a file: after a 401 only the resent one is printed.
  local -a buffer=(-o "$work/body")
  _auth_agent_curl_has_output "$@" && buffer=()
  _auth_agent_curl_once "$signed" "$work/head" "${buffer[@]}" "$@" || rc=$?
  status=$(_auth_agent_curl_status "$work/head")
  authorization=$(jq -r '.headers.Authorization // empty' <<<"$signed")
  provider=$(jq -r '.provider // empty' <<<"$signed")
  if [[ $status != 401 || -z $authorization || -z $provider ]]; then
    [[ ${#buffer[@]} -gt 0 && -f $work/body ]] && cat -- "$work/body"
    rm -rf -- "$work"
    return "$rc"
  fi
  local params
  params=$(jq -Rc --arg p "$provider" --argjson choice "$(_auth_agent_choice_json account)" \
    '{provider: $p, failedAuthorization: .} + $choice' <<<"$authorization")
  rc=0
  auth_agent_call refresh "$params" >/dev/null && signed=$(_auth_agent_sign_json "$url" "$method" "$provider") || rc=$?
  if ((rc)); then
    auth_agent_last_error >/dev/null
    rm -rf -- "$work"
    return "$rc"
  fi
  _auth_agent_curl_once "$signed" "$work/head" "$@" || rc=$?
  rm -rf -- "$work"
  return "$rc"
}

# auth_agent_login PROVIDER [FLOW]: ask for the fields the provider's login
# needs (from status; with FLOW, one of the provider's flows, that flow's) on
# stderr, reading answers from stdin, secrets without echo; then log in and
# print the result. Values reach jq through a pipe, never through argv, where
# other users could see them in ps.
# auth_agent_login URL [FLOW]: an http(s) URL instead of a provider is an API
# with no configuration: the agent learns it (login {resource}) and runs a
# browser login (FLOW deviceCode: a device login where offered); the result's
# provider is the learned provider's id.
auth_agent_login() {
  _auth_agent_need_jq || return
  local provider=${1:?auth_agent_login PROVIDER|URL [FLOW]} flow=${2:-} status fields
  if [[ $provider == http://* || $provider == https://* ]]; then
    auth_agent_call login "$(jq -cn --arg r "$provider" --arg f "$flow" '{resource: $r} + (if $f == "" then {} else {flow: $f} end)')"
    return
  fi
  # status lists the default flow's fields; another flow asks what its kind asks.
  case $flow in
    '') status=$(auth_agent_call status '{}') || return
        fields=$(jq -c --arg p "$provider" '.providers[] | select(.id == $p) | .fields' <<<"$status") ;;
    password|session) fields='[{"name":"username","label":"Username","secret":false},{"name":"password","label":"Password","secret":true}]' ;;
    token) fields='[{"name":"token","label":"Token","secret":true}]' ;;
    *) fields='[]' ;;
  esac
  local base
  base=$(jq -cn --arg p "$provider" --arg f "$flow" '{provider: $p} + (if $f == "" then {} else {flow: $f} end)')
  # Unknown providers (the agent says so) and flows that ask nothing.
  if [[ -z $fields || $fields == "[]" ]]; then
    auth_agent_call login "$base"
    return
  fi
  local -a prompts values=()
  local prompt value params
  mapfile -t prompts < <(jq -r '.[] | "\(.secret) \(.label)"' <<<"$fields")
  for prompt in "${prompts[@]}"; do
    local -a secret=()
    [[ $prompt == true\ * ]] && secret=(-s)
    read -r "${secret[@]}" -p "${prompt#* }: " value || { _auth_agent_say "no answer for ${prompt#* }"; return 2; }
    [[ -t 0 && -n ${secret[*]} ]] && echo >&2
    values+=("$value")
  done
  params=$(printf '%s\n' "${values[@]}" | jq -Rnc --argjson base "$base" --argjson fields "$fields" \
    '[inputs] as $v | $base + {credentials: ([$fields, $v] | transpose | map({key: .[0].name, value: .[1]}) | from_entries)}')
  auth_agent_call login "$params"
}

# auth_agent_logout PROVIDER [--all]: log out of the account AUTH_AGENT_ACCOUNT
# names (else the one this agent would use), or of every account with --all;
# prints the result.
auth_agent_logout() {
  _auth_agent_need_jq || return
  local provider=${1:?auth_agent_logout PROVIDER [--all]} all=false
  case ${2:-} in
    "") ;;
    --all) all=true ;;
    *) _auth_agent_say "usage: auth_agent_logout PROVIDER [--all]"; _auth_agent_fail "" badArguments; return 2 ;;
  esac
  auth_agent_call logout "$(jq -cn --arg p "$provider" --argjson all "$all" --argjson choice "$(_auth_agent_choice_json account)" \
    '{provider: $p} + $choice + (if $all then {all: true} else {} end)')"
}

# auth_agent_forget PROVIDER: remove a learned provider (logged out, revoked,
# its registration deleted); prints {forgotten, revoked}.
auth_agent_forget() {
  _auth_agent_need_jq || return
  auth_agent_call forget "$(jq -cn --arg p "${1:?auth_agent_forget PROVIDER}" '{provider: $p}')"
}

# auth_agent_fetch [--login-if-needed] METHOD URL: the agent sends the request
# (signed like auth_agent_sign, refreshed and resent once after a 401) and
# prints fetch's result JSON: status, headers, body (or bodyBase64), provider,
# signed, retried, and, when no provider covers URL and it answered 401 with a
# Bearer challenge, login {resource, authorizationServer, scopes} for
# auth_agent_login. --login-if-needed lets the agent run that login itself
# (prompting this script, as auth_agent_login does) and resend.
auth_agent_fetch() {
  _auth_agent_need_jq || return
  local login=""
  [[ ${1:-} == --login-if-needed ]] && { login=ifNeeded; shift; }
  if (($# != 2)); then _auth_agent_say "usage: auth_agent_fetch [--login-if-needed] METHOD URL"; _auth_agent_fail "" badArguments; return 2; fi
  auth_agent_call fetch "$(jq -cn --arg m "$1" --arg u "$2" --arg l "$login" --argjson choice "$(_auth_agent_choice_json)"     '{request: {method: $m, url: $u}} + (if $l == "" then {} else {login: $l} end) + $choice')"
}

# auth_agent_select_account PROVIDER [ACCOUNT]: this agent's requests to
# PROVIDER that name no account use ACCOUNT from now on; without ACCOUNT,
# the provider's default again. Only this script's agent is affected.
auth_agent_select_account() {
  _auth_agent_need_jq || return
  auth_agent_call selectAccount "$(jq -cn --arg p "${1:?auth_agent_select_account PROVIDER [ACCOUNT]}" --arg a "${2:-}" \
    '{provider: $p, account: (if $a == "" then null else $a end)}')"
}

# auth_agent_set_default_account PROVIDER ACCOUNT: the provider's default
# account, for every agent and the command line (kept in the store).
auth_agent_set_default_account() {
  _auth_agent_need_jq || return
  auth_agent_call setDefaultAccount "$(jq -cn --arg p "${1:?auth_agent_set_default_account PROVIDER ACCOUNT}" \
    --arg a "${2:?auth_agent_set_default_account PROVIDER ACCOUNT}" '{provider: $p, account: $a}')"
}

# auth_agent_connect [--bin PATH] [--config FILE]: the socket agent
# AUTH_AGENT_SOCK names (auth-agent serve --socket: one agent and one login for
# every tool of the session), through the `auth-agent connect` relay; where none
# answers within a second the relay serves itself, as auth_agent_start's agent.
auth_agent_connect() {
  auth_agent_start "$@" connect
}

# auth_agent_complete_login REQUEST_ID REDIRECT_URL: finishes a waiting browser
# login (REQUEST_ID: its loginPrompt's requestId; a number stays a number) with
# the whole redirect URL its browser ended at, pasted back because that browser
# could not reach the agent. A wrong state, a used URL or an unknown request is
# -32602, and the login keeps waiting.
auth_agent_complete_login() {
  _auth_agent_need_jq || return
  auth_agent_call completeLogin "$(jq -cn --arg i "${1:?auth_agent_complete_login REQUEST_ID REDIRECT_URL}" \
    --arg u "${2:?auth_agent_complete_login REQUEST_ID REDIRECT_URL}" '{requestId: ($i | tonumber? // $i), redirectUrl: $u}')"
}

# auth_agent_stop: shutdown + exit, then make sure the process is gone.
auth_agent_stop() {
  if _auth_agent_running; then
    AUTH_AGENT_TIMEOUT=5 auth_agent_call shutdown '{}' >/dev/null 2>&1
    auth_agent_notify exit '{}' 2>/dev/null
  fi
  [[ -n ${_AUTH_AGENT_IN:-} ]] && exec {_AUTH_AGENT_IN}>&-
  [[ -n ${_AUTH_AGENT_OUT:-} ]] && exec {_AUTH_AGENT_OUT}<&-
  [[ -n ${_AUTH_AGENT_STDOUT:-} ]] && exec {_AUTH_AGENT_STDOUT}>&-
  if [[ -n ${AUTH_AGENT_PID:-} ]]; then
    local i
    for ((i = 0; i < 50; i++)); do kill -0 "$AUTH_AGENT_PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$AUTH_AGENT_PID" 2>/dev/null && kill "$AUTH_AGENT_PID" 2>/dev/null
    wait "$AUTH_AGENT_PID" 2>/dev/null
  fi
  [[ -n ${AUTH_AGENT_DIR:-} ]] && rm -rf -- "$AUTH_AGENT_DIR"
  unset _AUTH_AGENT_IN _AUTH_AGENT_OUT _AUTH_AGENT_STDOUT AUTH_AGENT_PID AUTH_AGENT_DIR AUTH_AGENT_NOTIFICATIONS_FILE _AUTH_AGENT_PARTIAL
  return 0
}

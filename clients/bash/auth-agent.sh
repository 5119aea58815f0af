# auth-agent.sh: talk to a long-lived auth-agent from bash (4+).
#
#   source clients/bash/auth-agent.sh
#   auth_agent_start --config ~/.config/auth-agent/config.json
#   auth_agent_call login '{"provider":"corp","credentials":{...}}'
#   curl -H @- "$url" <<<"$(auth_agent_sign "$url")"
#   auth_agent_stop
#
# The agent runs as a coprocess and speaks JSON-RPC 2.0, one message per line.
# Calls are sequential: one caller reads the agent's output at a time. Calls
# may run inside $(...), so everything that must outlive a call (the id
# counter, received notifications) lives in files under $AUTH_AGENT_DIR
# rather than in shell variables, which a subshell cannot hand back.
#
# Return codes: 0 success, 1 the agent answered with an error, 2 no answer
# (agent not running, exited, timed out, jq missing, bad arguments).

# The protocol's names, mirrored from schema/openrpc.json (test.sh checks them).
# Methods map to "request" or "notification" (no answer is sent for those).
declare -gA AUTH_AGENT_METHODS=(
  [initialize]=request [ping]=request [shutdown]=request [status]=request
  [login]=request [logout]=request [sign]=request [refresh]=request
  [token]=request [subscribe]=request [unsubscribe]=request
  [exit]=notification ['$/cancelRequest']=notification
)
# Agent-to-host notifications. loginPrompt goes to the host whose device-code or
# browser login is waiting, subscribed or not.
declare -ga AUTH_AGENT_EVENTS=(userLoggedIn userLoggedOut tokenRefreshed loginPrompt)
# Error codes to reasons, used when an error carries no data.reason.
declare -gA AUTH_AGENT_ERRORS=(
  [-32700]=parseError [-32600]=invalidRequest [-32601]=methodNotFound
  [-32602]=invalidParams [-32603]=internalError [-32800]=requestCancelled
  [1001]=notLoggedIn [1002]=unknownProvider [1003]=invalidCredentials
  [1004]=sessionExpired [1005]=authServerUnavailable [1006]=originNotAllowed
  [1007]=excessiveRefresh [1008]=loginDenied [1009]=loginTimedOut
  [1010]=storeUnavailable
)

# Seconds a call waits for its answer before cancelling it.
: "${AUTH_AGENT_TIMEOUT:=30}"

_auth_agent_say() { printf 'auth-agent.sh: %s\n' "$*" >&2; }

_auth_agent_need_jq() {
  command -v jq >/dev/null 2>&1 && return 0
  _auth_agent_say "jq is required (apt-get install jq)"
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
  # A bad config makes the agent exit at once (status 2, reason on stderr).
  if ! auth_agent_call ping '{}' >/dev/null; then
    _auth_agent_say "the agent did not start; see its message above"
    auth_agent_stop
    return 2
  fi
}

# Writes one line to the agent. In a subshell so that a dead agent costs a
# failed write (SIGPIPE ends only the subshell) instead of the caller's shell.
_auth_agent_send() {
  if ! _auth_agent_running; then _auth_agent_say "the agent is not running"; return 2; fi
  if ! (printf '%s\n' "$1" >&"$_AUTH_AGENT_IN") 2>/dev/null; then
    _auth_agent_say "the agent exited; could not send the request"
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

# Records a notification and hands it to the hook. The hook's stdout goes to
# stderr: a call inside $(...) must print its result and nothing else. Its
# status is ignored, so a hook ending in a false test cannot trip set -e.
_auth_agent_dispatch() { # METHOD PARAMS LINE
  printf '%s\n' "$3" >>"$AUTH_AGENT_NOTIFICATIONS_FILE"
  if [[ -n ${AUTH_AGENT_ON_NOTIFICATION:-} ]]; then
    "$AUTH_AGENT_ON_NOTIFICATION" "$1" "$2" >&2 || true
  fi
}

# Classifies one received line as tab-separated fields with no empty field:
#   n METHOD PARAMS | r ID RESULT | e ID CODE REASON MESSAGE | x
_auth_agent_classify() {
  jq -r 'if has("method") then "n\t\(.method)\t\(.params // {} | tojson)"
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
# Prints the result JSON; on an error prints "code reason message" to stderr.
auth_agent_call() {
  _auth_agent_need_jq || return
  local method=$1 params=${2:-"{}"}
  if [[ ${AUTH_AGENT_METHODS[$method]:-} == notification ]]; then
    _auth_agent_say "$method is a notification; use auth_agent_notify"
    return 2
  fi
  if [[ -z ${AUTH_AGENT_DIR:-} ]]; then _auth_agent_say "not started; call auth_agent_start first"; return 2; fi
  local id line
  id=$(_auth_agent_next_id)
  line=$(_auth_agent_message "$method" "$id" <<<"$params") || { _auth_agent_say "params for $method are not valid JSON"; return 2; }
  _auth_agent_send "$line" || return
  local deadline=$((SECONDS + AUTH_AGENT_TIMEOUT)) left rc kind a b c d
  while :; do
    left=$((deadline - SECONDS))
    if ((left <= 0)); then
      auth_agent_notify '$/cancelRequest' "{\"id\":$id}" 2>/dev/null
      _auth_agent_say "no answer to $method within ${AUTH_AGENT_TIMEOUT}s; cancelled it"
      return 2
    fi
    rc=0
    _auth_agent_read_line "$left" || rc=$?
    case $rc in
      1) _auth_agent_say "the agent exited before answering $method"; return 2 ;;
      2) continue ;;
    esac
    IFS=$'\t' read -r kind a b c d <<<"$(_auth_agent_classify "$_AUTH_AGENT_LINE")"
    case $kind in
      n) _auth_agent_dispatch "$a" "$b" "$_AUTH_AGENT_LINE" ;;
      r) [[ $a == "$id" ]] && { printf '%s\n' "$b"; return 0; } ;;
      e) if [[ $a == "$id" ]]; then
           [[ $c == - ]] && c=${AUTH_AGENT_ERRORS[$b]:-error}
           printf '%s %s %s\n' "$b" "$c" "$d" >&2
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
    IFS=$'\t' read -r kind a b <<<"$(_auth_agent_classify "$_AUTH_AGENT_LINE")"
    [[ $kind == n ]] && _auth_agent_dispatch "$a" "$b" "$_AUTH_AGENT_LINE"
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

# auth_agent_sign URL [METHOD] [PROVIDER]: print the headers that authorize
# the request as "Name: value" lines (nothing when no provider covers URL),
# ready for curl -H @-.
auth_agent_sign() {
  _auth_agent_need_jq || return
  local params result
  params=$(jq -cn --arg url "${1:?auth_agent_sign URL [METHOD] [PROVIDER]}" --arg method "${2:-GET}" --arg provider "${3:-}" \
    '{request: {method: $method, url: $url}} + (if $provider == "" then {} else {provider: $provider} end)') || return 2
  result=$(auth_agent_call sign "$params") || return
  jq -r '.headers | to_entries[] | "\(.key): \(.value)"' <<<"$result"
}

# auth_agent_login PROVIDER: ask for the fields the provider's login needs
# (from status) on stderr, reading answers from stdin, secrets without echo;
# then log in and print the result. Values reach jq through a pipe, never
# through argv, where other users could see them in ps.
auth_agent_login() {
  _auth_agent_need_jq || return
  local provider=${1:?auth_agent_login PROVIDER} status fields
  status=$(auth_agent_call status '{}') || return
  fields=$(jq -c --arg p "$provider" '.providers[] | select(.id == $p) | .fields' <<<"$status")
  # Unknown providers (the agent says so) and flows that ask nothing.
  if [[ -z $fields || $fields == "[]" ]]; then
    auth_agent_call login "$(jq -cn --arg p "$provider" '{provider: $p}')"
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
  params=$(printf '%s\n' "${values[@]}" | jq -Rnc --arg p "$provider" --argjson fields "$fields" \
    '[inputs] as $v | {provider: $p, credentials: ([$fields, $v] | transpose | map({key: .[0].name, value: .[1]}) | from_entries)}')
  auth_agent_call login "$params"
}

# auth_agent_stop: shutdown + exit, then make sure the process is gone.
auth_agent_stop() {
  if _auth_agent_running; then
    AUTH_AGENT_TIMEOUT=5 auth_agent_call shutdown '{}' >/dev/null 2>&1
    auth_agent_notify exit '{}' 2>/dev/null
  fi
  [[ -n ${_AUTH_AGENT_IN:-} ]] && exec {_AUTH_AGENT_IN}>&-
  [[ -n ${_AUTH_AGENT_OUT:-} ]] && exec {_AUTH_AGENT_OUT}<&-
  if [[ -n ${AUTH_AGENT_PID:-} ]]; then
    local i
    for ((i = 0; i < 50; i++)); do kill -0 "$AUTH_AGENT_PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$AUTH_AGENT_PID" 2>/dev/null && kill "$AUTH_AGENT_PID" 2>/dev/null
    wait "$AUTH_AGENT_PID" 2>/dev/null
  fi
  [[ -n ${AUTH_AGENT_DIR:-} ]] && rm -rf -- "$AUTH_AGENT_DIR"
  unset _AUTH_AGENT_IN _AUTH_AGENT_OUT AUTH_AGENT_PID AUTH_AGENT_DIR AUTH_AGENT_NOTIFICATIONS_FILE _AUTH_AGENT_PARTIAL
  return 0
}

#!/usr/bin/env bash
# A stand-in agent for test.sh that asks the host, as the real one does with
# presentLogin: for each login it sends the request the login's provider names
# (presentLogin, or any other name), reads the host's answer and answers the
# login with it ({answer: MESSAGE}); initialize is answered with its params.
# Every line it reads is appended to $ASKING_AGENT_LOG when that is set.
asked=0
while IFS= read -r line; do
  [[ -n ${ASKING_AGENT_LOG:-} ]] && printf '%s\n' "$line" >>"$ASKING_AGENT_LOG"
  method=$(jq -r .method <<<"$line") id=$(jq -c .id <<<"$line")
  [[ $method == exit ]] && exit 0
  [[ $id == null ]] && continue
  case $method in
    login)
      asked=$((asked + 1))
      jq -c --arg n "agent-$asked" '{jsonrpc: "2.0", id: $n, method: .params.provider, params: {provider: "corp",
        displayName: "Corp", kind: "browser", url: "https://sso.example.com/authorize?state=s",
        expiresAt: "2030-01-01T00:00:00Z", requestId: .id}}' <<<"$line"
      IFS= read -r answer
      jq -c --argjson id "$id" '{jsonrpc: "2.0", id: $id, result: {answer: .}}' <<<"$answer" ;;
    initialize) jq -c '{jsonrpc: "2.0", id, result: {protocolVersion: "1", echo: .params}}' <<<"$line" ;;
    shutdown) jq -c '{jsonrpc: "2.0", id, result: null}' <<<"$line" ;;
    *) jq -c '{jsonrpc: "2.0", id, result: {}}' <<<"$line" ;;
  esac
done

"""A stand-in agent that asks the host, as the real one does with
``presentLogin``: for each ``login`` it sends the request named by the
login's ``provider`` (``presentLogin``, or any other name), waits for the
host's answer and answers the login with it, ``{"answer": <the host's
message>}``; ``initialize`` is answered with the params it got, so the tests
see the capability the client declared."""

import json
import sys


def send(message: object) -> None:
    print(json.dumps(message), flush=True)


PRESENT = {"provider": "corp", "displayName": "Corp", "kind": "browser",
           "url": "https://sso.example.com/authorize?state=s", "expiresAt": "2030-01-01T00:00:00Z"}
asked = 0
lines = iter(sys.stdin)
for line in lines:
    request = json.loads(line)
    if "id" not in request:
        if request["method"] == "exit":
            break
        continue
    method, params = request["method"], request.get("params") or {}
    result: object = {}
    if method == "initialize":
        result = {"protocolVersion": "1", "echo": params}
    elif method == "login":
        asked += 1
        agent_id = f"agent-{asked}"
        send({"jsonrpc": "2.0", "id": agent_id, "method": params["provider"],
              "params": {**PRESENT, "requestId": request["id"]}})
        answer = json.loads(next(lines))
        assert answer.get("id") == agent_id, answer
        result = {"answer": answer}
    elif method == "shutdown":
        result = None
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})

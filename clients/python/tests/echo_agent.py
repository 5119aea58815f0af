"""A stand-in agent that answers each request with the params it got (as
``echo``), and for ``login``, ``fetch`` and ``forget`` with results shaped like the
real agent's for an API it learns: enough to check what the client sends for
``login(resource=...)``, ``fetch(login="ifNeeded")`` and ``forget`` and what it
makes of the answers, without a server to learn from."""

import json
import sys


def send(message: object) -> None:
    print(json.dumps(message), flush=True)


LEARNED = "api.example.com"
HINT = {"resource": "https://api.example.com/mcp", "authorizationServer": "https://auth.example.com", "scopes": ["mcp"]}

for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        if request["method"] == "exit":
            break
        continue
    method, params = request["method"], request.get("params")
    result: object = {"echo": {"method": method, "params": params}}
    if method == "login":
        result = {"provider": LEARNED, "account": "1", "user": {"sub": "alice"}, "expiresAt": None, **result}
    elif method == "fetch":
        answer = {"status": 401, "headers": {"www-authenticate": "Bearer"}, "body": "", "signed": False, "retried": False}
        if not (params or {}).get("login"):
            answer["login"] = HINT
        result = {**answer, **result}
    elif method == "forget":
        result = {"forgotten": True, "revoked": True, **result}
    elif method == "shutdown":
        result = None
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})

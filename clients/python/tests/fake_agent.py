"""A stand-in agent for what the real one cannot be made to do on demand: it
answers every request after sending a notification this client does not know
(as a newer agent might) and then a known one."""

import json
import sys


def send(message: object) -> None:
    print(json.dumps(message), flush=True)


for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        if request["method"] == "exit":
            break
        continue
    send({"jsonrpc": "2.0", "method": "loginPrompt", "params": {"provider": "corp"}})
    send(
        {
            "jsonrpc": "2.0",
            "method": "userLoggedOut",
            "params": {"provider": "corp", "reason": "external"},
        }
    )
    send(
        {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": None if request["method"] == "shutdown" else {},
        }
    )

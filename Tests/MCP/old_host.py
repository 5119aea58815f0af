"""A host of MCP revision 2025-06-18 for auth-agent's bridge tests, which the MCP Python SDK's
client cannot offer (it offers 2025-11-25 or 2026-07-28): JSON-RPC lines on the bridge's stdio,
as a 2025-06-18 host writes them (initialize, notifications/initialized, then requests; the
server's requests — elicitation/create, ping, roots/list — answered).

    python old_host.py --bridge PATH --url URL [--config FILE] [--bridge-arg ARG]...

Prints one JSON line: what the host learned (protocolVersion, serverInfo, tools, echo, ask_name,
elicited) and `messages`, every message the bridge wrote, for the test to check the stream.
"""
import argparse
import json
import subprocess
import sys
import threading
import queue

REVISION = "2025-06-18"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--config")
    parser.add_argument("--bridge-arg", action="append", default=[])
    args = parser.parse_args()
    argv = [args.bridge, "mcp", args.url] + (["--config", args.config] if args.config else []) + args.bridge_arg
    bridge = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in bridge.stdout], daemon=True).start()
    messages: list = []
    seen: dict = {}

    def send(message: dict) -> None:
        bridge.stdin.write(json.dumps(message) + "\n")
        bridge.stdin.flush()

    def answer_of(request_id, timeout: float = 60):
        """Reads until the response to request_id, answering the bridge's requests meanwhile."""
        while True:
            message = json.loads(lines.get(timeout=timeout))
            messages.append(message)
            if "method" in message and "id" in message:
                if message["method"] == "elicitation/create":
                    seen["elicited"] = message["params"]["message"]
                    result = {"action": "accept", "content": {"value": "Ada"}}
                elif message["method"] == "roots/list":
                    result = {"roots": []}
                else:
                    result = {}
                send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif message.get("id") == request_id:
                return message

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": REVISION, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "old-host", "version": "1"}}})
    initialized = answer_of(0)["result"]
    seen["protocolVersion"] = initialized["protocolVersion"]
    seen["serverInfo"] = initialized["serverInfo"]
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    seen["tools"] = sorted(tool["name"] for tool in answer_of(1)["result"]["tools"])
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}})
    seen["echo"] = answer_of(2)["result"]["content"][0]["text"]
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}})
    seen["ask_name"] = answer_of(3)["result"]["content"][0]["text"]
    send({"jsonrpc": "2.0", "id": 4, "method": "ping"})
    seen["ping"] = answer_of(4).get("result")
    bridge.stdin.close()
    bridge.wait(timeout=10)
    seen["messages"] = messages
    print(json.dumps(seen), flush=True)


if __name__ == "__main__":
    sys.exit(main())

"""An MCP host for auth-agent's bridge tests: the official MCP Python SDK's stdio client
launching `auth-agent mcp URL`, exercising FastMCP's tools, resources and prompts, and
printing one JSON line with what it saw.

    python bridge_host.py --bridge PATH --url URL [--mode auto|legacy] [--config FILE] [--quick] [--bridge-arg ARG]...

--mode auto is the SDK's default (server/discover at the newest revision, else initialize);
legacy is the initialize handshake (2025-11-25). --quick lists and calls one tool only.
--serve keeps the bridge running: a JSON line {"ready": ...} once connected, then for each line
read from stdin, `echo` called with that text and a JSON line {"echo": ...} or {"error": ...}
(a host that stays open while the server restarts behind it).

    python bridge_host.py --register BASE_URL --write-config FILE --store DIR --redirect-port N

registers a public client at FastMCP's /register (RFC 7591) and writes an auth-agent
configuration with that client as a provider opening the browser (the tests' xdg-open
plays it), until the agent learns providers by itself.
"""
import argparse
import asyncio
import json
import os
import sys
import time

from mcp import Client
from mcp.client.stdio import StdioServerParameters
import mcp_types as types


def register(base: str, config_path: str, store: str, port: int) -> None:
    import urllib.request
    body = json.dumps({"redirect_uris": [f"http://127.0.0.1:{port}/callback"], "token_endpoint_auth_method": "none",
                       "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                       "scope": "mcp:read mcp:write", "client_name": "auth-agent bridge test"}).encode()
    request = urllib.request.Request(base + "/register", data=body, headers={"Content-Type": "application/json"})
    client_id = json.load(urllib.request.urlopen(request))["client_id"]
    # Short windows so a test's few-second tokens are used until they expire, not refreshed at once.
    config = {"refreshWindowSeconds": 1, "minValiditySeconds": 1, "store": {"kind": "file", "path": store}, "providers": [{
        "id": "fastmcp", "displayName": "FastMCP", "flow": "authorizationCode", "origins": [base],
        "authorizationEndpoint": base + "/authorize", "tokenEndpoint": base + "/token", "clientId": client_id,
        "scopes": ["mcp:read", "mcp:write"], "redirectPort": port, "openBrowser": True}]}
    with open(os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        json.dump(config, f)


async def main() -> None:
    if "--register" in sys.argv:
        parser = argparse.ArgumentParser()
        parser.add_argument("--register", required=True)
        parser.add_argument("--write-config", required=True)
        parser.add_argument("--store", required=True)
        parser.add_argument("--redirect-port", type=int, required=True)
        args = parser.parse_args()
        return register(args.register, args.write_config, args.store, args.redirect_port)
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--config")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--bridge-arg", action="append", default=[])
    parser.add_argument("--elicit-url", choices=["capable", "incapable"])
    args = parser.parse_args()
    if args.elicit_url:
        return await elicit_url(args)

    bridge_args = ["mcp", args.url] + (["--config", args.config] if args.config else []) + args.bridge_arg
    params = StdioServerParameters(command=args.bridge, args=bridge_args, env=dict(os.environ))
    seen: dict = {"mode": args.mode}
    progress: list = []

    async def on_elicit(context, params):
        seen["elicited"] = params.message
        return types.ElicitResult(action="accept", content={"value": "Ada"})

    async def on_progress(value, total, message):
        progress.append(value)

    started = time.monotonic()
    client = Client(params, mode=args.mode, elicitation_callback=on_elicit)
    async with client:
        seen["protocolVersion"] = client.session.protocol_version if hasattr(client, "session") else None
        if args.serve:
            return await serve(client, seen)
        tools = await client.list_tools()
        seen["tools"] = sorted(tool.name for tool in tools.tools)
        echo = await client.call_tool("echo", {"text": "hi"})
        seen["echo"] = echo.content[0].text
        seen["firstCallSeconds"] = round(time.monotonic() - started, 3)
        if not args.quick:
            counted = await client.call_tool("count", {"to": 3}, progress_callback=on_progress)
            seen["count"] = counted.content[0].text
            seen["progress"] = progress
            asked = await client.call_tool("ask_name", {})
            seen["ask_name"] = asked.content[0].text
            resources = await client.list_resources()
            seen["resources"] = [str(r.uri) for r in resources.resources]
            read = await client.read_resource("test://greeting")
            seen["greeting"] = read.contents[0].text
            prompts = await client.list_prompts()
            seen["prompts"] = [p.name for p in prompts.prompts]
            prompt = await client.get_prompt("greet", {"name": "Ada"})
            seen["prompt"] = prompt.messages[0].content.text
    seen["closedSeconds"] = round(time.monotonic() - started, 3)
    print(json.dumps(seen), flush=True)


async def elicit_url(args) -> None:
    """--elicit-url: calls connect_account (a URL-mode elicitation) as a host that declared URL
    elicitation (`capable`: its callback opens the page itself, as its browser would) or declared
    no elicitation at all (`incapable`: the SDK's host without a callback); prints what the tool
    said, what the host was asked and which notifications reached it."""
    import urllib.request
    params = StdioServerParameters(command=args.bridge, args=["mcp", args.url] + (["--config", args.config] if args.config else []) + args.bridge_arg,
                                   env=dict(os.environ))
    seen: dict = {"elicited": [], "notifications": []}

    async def on_elicit(context, params):
        seen["elicited"].append({"mode": params.mode, "url": getattr(params, "url", None)})
        await asyncio.get_running_loop().run_in_executor(None, lambda: urllib.request.urlopen(params.url).read())
        return types.ElicitResult(action="accept")

    async def on_message(message):
        method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)
        if method:
            seen["notifications"].append(method)

    callback = on_elicit if args.elicit_url == "capable" else None
    async with Client(params, mode=args.mode, elicitation_callback=callback, message_handler=on_message) as client:
        answer = await client.call_tool("connect_account", {})
        seen["connect"] = answer.content[0].text
        await asyncio.sleep(0.3)  # a completion sent just before the answer is read
    print(json.dumps(seen), flush=True)


async def serve(client, seen: dict) -> None:
    print(json.dumps({"ready": seen}), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return
        try:
            answer = await client.call_tool("echo", {"text": line.strip()})
            print(json.dumps({"echo": answer.content[0].text}), flush=True)
        except Exception as error:  # the test reads what went wrong
            print(json.dumps({"error": str(error)}), flush=True)


asyncio.run(main())

"""An MCP host for auth-agent's bridge tests: the official MCP Python SDK's stdio client
launching `auth-agent mcp URL`, exercising FastMCP's tools, resources and prompts, and
printing one JSON line with what it saw.

    python bridge_host.py --bridge PATH --url URL [--mode auto|legacy] [--config FILE]
                          [--errlog FILE] [--quick]

--mode auto is the SDK's default (server/discover at the newest revision, else initialize);
legacy is the initialize handshake (2025-11-25). --quick lists and calls one tool only.
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


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--config")
    parser.add_argument("--errlog")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()

    bridge_args = ["mcp", args.url] + (["--config", args.config] if args.config else [])
    params = StdioServerParameters(command=args.bridge, args=bridge_args, env=dict(os.environ))
    seen: dict = {"mode": args.mode}
    progress: list = []

    async def on_elicit(context, params):
        seen["elicited"] = params.message
        return types.ElicitResult(action="accept", content={"value": "Ada"})

    async def on_progress(value, total, message):
        progress.append(value)

    errlog = open(args.errlog, "a") if args.errlog else sys.stderr
    started = time.monotonic()
    client = Client(params, mode=args.mode, elicitation_callback=on_elicit)
    client._errlog = errlog  # noqa: SLF001 — not every SDK version takes errlog; stderr is fine otherwise
    async with client:
        seen["protocolVersion"] = client.session.protocol_version if hasattr(client, "session") else None
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


asyncio.run(main())

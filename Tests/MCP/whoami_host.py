"""An MCP host for the packaging tests: the official MCP Python SDK's stdio
client starting the command after `--` (an installed `auth-agent mcp URL`, or
`uvx`/`npx` running it), listing the tools and calling `whoami` at the dev
issuer's `/mcp`; prints one JSON line with what it saw.

    python whoami_host.py -- COMMAND [ARG...]
"""
import asyncio
import json
import os
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main() -> None:
    command = sys.argv[sys.argv.index("--") + 1:]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    seen: dict = {}
    async with Client(params, mode="legacy") as client:
        tools = await client.list_tools()
        seen["tools"] = sorted(tool.name for tool in tools.tools)
        answer = await client.call_tool("whoami", {})
        seen["whoami"] = answer.content[0].text
    print(json.dumps(seen), flush=True)


asyncio.run(main())

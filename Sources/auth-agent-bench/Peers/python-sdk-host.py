"""The MCP Python SDK as the host in auth-agent-bench --mcp --sdk-host PYTHON (issue 33: the figures
with an SDK as the host, not the bench's own lines). Launches a bridge command over stdio with the
SDK's `Client` (`mcp` as pinned in Tests/MCP/requirements.txt), lets it connect, then calls the
server's `echo` tool N times, one at a time, and prints one JSON line: {"p50": ms, "p99": ms,
"connect": ms} as the host saw them (the SDK's own work included).

    PYTHON python-sdk-host.py --calls N [--mode legacy|auto] -- COMMAND ARG...

--mode legacy (the default here) is the initialize handshake of 2025-11-25, as desktop hosts speak it;
the SDK's own default, auto (server/discover first), leaves mcp-remote 0.1.43 without a session:
its `initialize` after the probe fails with "Session not found".

The bridge inherits this process's environment (the bench sets each bridge's own).
"""
import argparse
import asyncio
import json
import os
import time

from mcp import Client
from mcp.client.stdio import StdioServerParameters


def percentile(values: list, rank: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, len(ordered) * rank // 100)]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--mode", default="legacy")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = [c for c in args.command if c != "--"]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    started = time.monotonic()
    async with Client(params, mode=args.mode) as client:
        connected = time.monotonic()
        times = []
        for i in range(args.calls):
            t0 = time.monotonic()
            await client.call_tool("echo", {"text": f"call {i}"})
            times.append((time.monotonic() - t0) * 1000)
    print(json.dumps({"p50": percentile(times, 50), "p99": percentile(times, 99), "connect": (connected - started) * 1000}), flush=True)


asyncio.run(main())

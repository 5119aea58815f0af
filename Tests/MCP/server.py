"""A protected MCP server nobody here wrote — FastMCP's own OAuth side — for auth-agent's tests.

    python server.py --port P [--info FILE] [--request-log FILE]

FastMCP's InMemoryOAuthProvider serves RFC 9728 protected-resource metadata, RFC 8414
server metadata, RFC 7591 registration, an /authorize that approves at once (302 to the
redirect URI with a code: the test "plays the browser" by following it), /token with PKCE
and rotating refresh tokens, and the MCP endpoint at /mcp (Streamable HTTP).

What the tests add, outside MCP and OAuth:
- every HTTP request is appended to --request-log as one line `METHOD PATH STATUS`, so a test
  can count metadata, registration and token requests (the agent must not repeat them);
- POST /_test/access-token-lifetime with the form `seconds=N` (or just N) as its body changes the
  lifetime of the access tokens issued from then on (the provider reads a module constant
  at each issue), for expiry tests; FASTMCP_ACCESS_TOKEN_LIFETIME sets it at start;
- FASTMCP_REQUIRED_SCOPES (space-separated, default "mcp:read") are the scopes /mcp requires
  and the registration's default; FASTMCP_VALID_SCOPES (default "mcp:read mcp:write") the
  ones a client may register and ask for.
"""

import argparse
import json
import os
import sys

from fastmcp import Context, FastMCP
from fastmcp.server.auth.auth import ClientRegistrationOptions
from fastmcp.server.auth.providers import in_memory
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse


class RequestLog:
    """ASGI middleware writing `METHOD PATH STATUS` per request, flushed at once (the test reads it live)."""

    def __init__(self, app, path: str | None = None):
        self.app = app
        self.file = open(path, "a", buffering=1) if path else None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or self.file is None:
            return await self.app(scope, receive, send)
        status = {"code": 0}

        async def send_and_note(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                self.file.write(f"{scope['method']} {scope['path']} {status['code']}\n")
            await send(message)

        await self.app(scope, receive, send_and_note)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--info", default=None)
    parser.add_argument("--request-log", default=os.environ.get("FASTMCP_REQUEST_LOG"))
    args = parser.parse_args()

    base = f"http://127.0.0.1:{args.port}"
    required = os.environ.get("FASTMCP_REQUIRED_SCOPES", "mcp:read").split()
    valid = os.environ.get("FASTMCP_VALID_SCOPES", "mcp:read mcp:write").split()
    if "FASTMCP_ACCESS_TOKEN_LIFETIME" in os.environ:
        in_memory.DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS = int(os.environ["FASTMCP_ACCESS_TOKEN_LIFETIME"])

    auth = InMemoryOAuthProvider(
        base_url=base,
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=valid, default_scopes=required
        ),
        required_scopes=required,
    )
    mcp = FastMCP("auth-agent-test", auth=auth)

    @mcp.tool
    def echo(text: str) -> str:
        """Returns its argument."""
        return text

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Adds two integers."""
        return a + b

    @mcp.tool
    async def count(to: int, ctx: Context) -> str:
        """Sends a progress notification per step (when the caller gave a progressToken), then answers."""
        for step in range(1, to + 1):
            await ctx.report_progress(step, to, f"step {step}")
        return f"counted to {to}"

    @mcp.tool
    async def ask_name(ctx: Context) -> str:
        """Asks the host for a name by elicitation and greets it."""
        answer = await ctx.elicit("What is your name?", str)
        if answer.action == "accept":
            return f"Hello, {answer.data}!"
        return f"no name ({answer.action})"

    @mcp.resource("test://greeting")
    def greeting() -> str:
        """A fixed text resource."""
        return "Hello from the test server"

    @mcp.prompt
    def greet(name: str) -> str:
        """A prompt with one argument."""
        return f"Please greet {name} warmly."

    @mcp.custom_route("/_test/access-token-lifetime", methods=["POST"])
    async def set_lifetime(request: Request) -> PlainTextResponse:
        in_memory.DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS = int((await request.body()).decode().rpartition("=")[2])
        return PlainTextResponse(str(in_memory.DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS))

    if args.info:
        info = {
            "baseUrl": base,
            "port": args.port,
            "mcpUrl": f"{base}/mcp",
            "resourceMetadataUrl": f"{base}/.well-known/oauth-protected-resource/mcp",
            "serverMetadataUrl": f"{base}/.well-known/oauth-authorization-server",
            "issuer": f"{base}/",
            "requiredScopes": required,
            "validScopes": valid,
            "requestLog": args.request_log,
        }
        with open(args.info + ".tmp", "w") as f:
            f.write(json.dumps(info) + "\n")
        os.rename(args.info + ".tmp", args.info)

    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=args.port,
        show_banner=False,
        log_level="warning",
        middleware=[Middleware(RequestLog, path=args.request_log)],
    )


if __name__ == "__main__":
    sys.exit(main())

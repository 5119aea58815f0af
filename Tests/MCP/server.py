"""A protected MCP server nobody here wrote — FastMCP's own OAuth side — for auth-agent's tests.

    python server.py --port P [--info FILE] [--request-log FILE]

FastMCP's InMemoryOAuthProvider serves RFC 9728 protected-resource metadata, RFC 8414
server metadata, RFC 7591 registration, an /authorize that approves at once (302 to the
redirect URI with a code: the test "plays the browser" by following it), /token with PKCE
and rotating refresh tokens, and the MCP endpoint at /mcp (Streamable HTTP).

What the tests add, outside MCP and OAuth:
- every HTTP request is appended to --request-log as one line `METHOD PATH STATUS`, with the
  `grant_type` as a fourth word for POST /token, so a test can count metadata, registration,
  token and refresh requests (the agent must not repeat them);
- POST /_test/access-token-lifetime with the form `seconds=N` (or just N) as its body changes the
  lifetime of the access tokens issued from then on (the provider reads a module constant
  at each issue), for expiry tests; FASTMCP_ACCESS_TOKEN_LIFETIME sets it at start;
- FASTMCP_REVISIONS=stateless or =session makes /mcp a server of one era, which the SDK alone
  cannot be (it serves both, chosen by MCP-Protocol-Version): `stateless` refuses every
  authenticated POST not at 2026-07-28 with 400 and the UnsupportedProtocolVersionError (-32022,
  `supported: ["2026-07-28"]`) the 2026-07-28 versioning page prescribes, and GET/DELETE with 405
  (no session, no stream); `session` refuses a POST at 2026-07-28 with 400 and id null, as the
  TypeScript SDK 1.x does ("Bad Request: Unsupported protocol version",
  https://dev.to/greatworkco/how-to-fix-mcp-unsupported-protocol-version-3390);
- FASTMCP_ISSUER_HOST (default 127.0.0.1) is the host of the authorization server's URLs (its
  issuer, /authorize, /token, /register), the resource staying http://127.0.0.1:PORT/mcp: restarted
  with `localhost`, the resource names another authorization server (MCP 2026-07-28's credentials
  keyed by issuer) on the same process and port;
- FASTMCP_TRANSPORT=sse serves the deprecated HTTP+SSE transport of 2024-11-05 instead
  (FastMCP's `transport="sse"`): the event stream at GET /sse, whose first event names
  /messages/?session_id=… to POST messages to; the protected resource is /sse. With
  FASTMCP_SSE_ENDPOINT=foreign the endpoint event names an absolute URL on another origin
  (http://localhost:P instead of http://127.0.0.1:P), which a client must refuse;
- FASTMCP_REQUIRED_SCOPES (space-separated, default "mcp:read") are the scopes /mcp requires
  and the registration's default; FASTMCP_VALID_SCOPES (default "mcp:read mcp:write") the
  ones a client may register and ask for.
"""

import argparse
import asyncio
import json
import os
import sys
from urllib.parse import parse_qs

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.server.auth.auth import ClientRegistrationOptions
from fastmcp.server.auth.providers import in_memory
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse


class RequestLog:
    """ASGI middleware writing `METHOD PATH STATUS [GRANT]` per request, flushed at once (the
    test reads it live). GRANT is a token request's `grant_type`, read from the body the
    app receives (kept aside as it passes, so the app sees it unchanged)."""

    def __init__(self, app, path: str | None = None):
        self.app = app
        self.file = open(path, "a", buffering=1) if path else None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or self.file is None:
            return await self.app(scope, receive, send)
        body = bytearray()

        async def receive_and_keep():
            message = await receive()
            if message["type"] == "http.request" and scope["path"] == "/token":
                body.extend(message.get("body", b""))
            return message

        async def send_and_note(message):
            if message["type"] == "http.response.start":
                line = f"{scope['method']} {scope['path']} {message['status']}"
                grant = parse_qs(body.decode("utf-8", "replace")).get("grant_type")
                if grant:
                    line += " " + grant[0]
                self.file.write(line + "\n")
            await send(message)

        await self.app(scope, receive_and_keep, send_and_note)


class ForeignEndpoint:
    """ASGI middleware rewriting the HTTP+SSE stream's `endpoint` event to an absolute URL on
    another origin (FASTMCP_SSE_ENDPOINT=foreign, see the module's doc)."""

    def __init__(self, app, origin: str | None = None):
        self.app = app
        self.origin = origin

    async def __call__(self, scope, receive, send):
        if self.origin is None or scope["type"] != "http" or scope["path"] != "/sse":
            return await self.app(scope, receive, send)

        async def rewrite(message):
            if message["type"] == "http.response.body":
                message = dict(message, body=message.get("body", b"").replace(b"data: /messages/", b"data: " + self.origin.encode() + b"/messages/"))
            await send(message)

        await self.app(scope, receive, rewrite)


class RevisionGate:
    """ASGI middleware making /mcp a one-era server (FASTMCP_REVISIONS, see the module's doc).
    Requests without Authorization pass, so FastMCP's 401 comes first as at a real server."""

    MODERN = "2026-07-28"

    def __init__(self, app, era: str | None = None):
        self.app = app
        self.era = era

    async def __call__(self, scope, receive, send):
        if self.era is None or scope["type"] != "http" or scope["path"] != "/mcp":
            return await self.app(scope, receive, send)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if "authorization" not in headers:
            return await self.app(scope, receive, send)
        if scope["method"] != "POST":
            if self.era == "stateless":
                return await self.reply(send, 405, b"")
            return await self.app(scope, receive, send)
        body = bytearray()
        while True:
            message = await receive()
            body.extend(message.get("body", b""))
            if not message.get("more_body"):
                break
        version = headers.get("mcp-protocol-version")
        try:
            parsed = json.loads(body)
            parsed = parsed if isinstance(parsed, dict) else {}
        except ValueError:
            parsed = {}
        request_id = parsed.get("id")
        if self.era == "stateless" and version != self.MODERN:
            requested = version or (parsed.get("params") or {}).get("protocolVersion")
            error = {"code": -32022, "message": "Unsupported protocol version",
                     "data": {"supported": [self.MODERN], "requested": requested}}
            return await self.reply(send, 400, json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())
        if self.era == "session" and version == self.MODERN:
            error = {"code": -32000, "message": "Bad Request: Unsupported protocol version: 2026-07-28 (supported versions: 2025-11-25, 2025-06-18, 2025-03-26)"}
            return await self.reply(send, 400, json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode())
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    @staticmethod
    async def reply(send, status: int, body: bytes):
        headers = [(b"content-length", str(len(body)).encode())]
        if body:
            headers.append((b"content-type", b"application/json"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--info", default=None)
    parser.add_argument("--request-log", default=os.environ.get("FASTMCP_REQUEST_LOG"))
    args = parser.parse_args()

    resource_base = f"http://127.0.0.1:{args.port}"
    base = f"http://{os.environ.get('FASTMCP_ISSUER_HOST', '127.0.0.1')}:{args.port}"
    transport = os.environ.get("FASTMCP_TRANSPORT", "http")
    path = "/sse" if transport == "sse" else "/mcp"
    foreign = f"http://localhost:{args.port}" if os.environ.get("FASTMCP_SSE_ENDPOINT") == "foreign" else None
    required = os.environ.get("FASTMCP_REQUIRED_SCOPES", "mcp:read").split()
    valid = os.environ.get("FASTMCP_VALID_SCOPES", "mcp:read mcp:write").split()
    if "FASTMCP_ACCESS_TOKEN_LIFETIME" in os.environ:
        in_memory.DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS = int(os.environ["FASTMCP_ACCESS_TOKEN_LIFETIME"])

    auth = InMemoryOAuthProvider(
        base_url=base,
        resource_base_url=resource_base,
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
        """Asks the host for a name by elicitation and greets it: a server-to-host request in the
        session revisions, a multi-round-trip result (SEP-2322's guard pattern) at 2026-07-28."""
        if ctx.request_context is not None and ctx.request_context.protocol_version == "2026-07-28":
            answers = ctx.input_responses
            if not answers or "name" not in answers:
                schema = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}
                asked = mcp_types.ElicitRequest(method="elicitation/create",
                                                params=mcp_types.ElicitRequestFormParams(message="What is your name?", requested_schema=schema))
                return mcp_types.InputRequiredResult(input_requests={"name": asked}, request_state="asked-name")
            answer = answers["name"]
            if answer.action == "accept" and answer.content:
                return f"Hello, {answer.content['value']}!"
            return f"no name ({answer.action})"
        answer = await ctx.elicit("What is your name?", str)
        if answer.action == "accept":
            return f"Hello, {answer.data}!"
        return f"no name ({answer.action})"

    # URL-mode elicitation (MCP 2025-11-25): the page is on another origin than /mcp (localhost,
    # not 127.0.0.1), so a request there carrying the agent's Authorization would be the bridge
    # sending its token where it must not; each visit's Authorization header is kept for the tool's answer.
    visits: dict[str, list] = {}

    @mcp.custom_route("/_test/elicited", methods=["GET"])
    async def elicited(request: Request) -> PlainTextResponse:
        visits.setdefault(request.query_params.get("id", ""), []).append(request.headers.get("authorization"))
        return PlainTextResponse("Connected. You can close this tab.")

    @mcp.tool
    async def connect_account(ctx: Context) -> str:
        """Sends the person to a page by URL-mode elicitation (only to a client that declared the
        mode), waits for the browser's visit, then sends notifications/elicitation/complete; a
        multi-round-trip result at 2026-07-28. Says what the page saw."""
        stateless = ctx.request_context is not None and ctx.request_context.protocol_version == "2026-07-28"
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None or capabilities.elicitation.url is None:
            return "URL elicitation not declared by the client"
        elicitation_id = ctx.request_state if stateless and ctx.request_state else f"el-{len(visits)}-{os.getpid()}-{id(ctx)}"
        url = f"http://localhost:{args.port}/_test/elicited?id={elicitation_id}"
        if stateless:
            answers = ctx.input_responses
            if not answers or "connect" not in answers:
                params = mcp_types.ElicitRequestURLParams(message="Connect your account", url=url, elicitation_id=elicitation_id)
                return mcp_types.InputRequiredResult(input_requests={"connect": mcp_types.ElicitRequest(method="elicitation/create", params=params)},
                                                     request_state=elicitation_id)
            action = answers["connect"].action
        else:
            action = (await ctx.session.elicit_url("Connect your account", url, elicitation_id, related_request_id=ctx.request_id)).action
        if action != "accept":
            return f"not connected ({action})"
        for _ in range(100):
            if elicitation_id in visits:
                break
            await asyncio.sleep(0.1)
        else:
            return "accepted, but the page was never visited"
        if not stateless:
            await ctx.session.send_elicit_complete(elicitation_id, related_request_id=ctx.request_id)
        return f"connected: {len(visits[elicitation_id])} visit(s), Authorization {visits[elicitation_id]}"

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
            "baseUrl": resource_base,
            "port": args.port,
            "mcpUrl": f"{resource_base}{path}",
            "resourceMetadataUrl": f"{resource_base}/.well-known/oauth-protected-resource{path}",
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
        transport=transport,
        host="127.0.0.1",
        port=args.port,
        show_banner=False,
        log_level="warning",
        middleware=[Middleware(RequestLog, path=args.request_log),
                    Middleware(RevisionGate, era=os.environ.get("FASTMCP_REVISIONS")),
                    Middleware(ForeignEndpoint, origin=foreign)],
    )


if __name__ == "__main__":
    sys.exit(main())

"""A stdio-to-Streamable-HTTP MCP proxy made of the MCP Python SDK alone (PyPI `mcp`, the version pinned in
Tests/MCP/requirements.txt), with the SDK's own OAuth client: the bench's third bridge beside `auth-agent mcp`
and mcp-remote (issue 33, Benchmark).

    python python-sdk-proxy.py URL --store DIR

The OAuth side is the SDK's documented client, as its README ("OAuth Authentication for Clients") and
examples/snippets/clients/oauth_client.py in modelcontextprotocol/python-sdk show it: `OAuthClientProvider`
as the HTTP client's `auth`, a `TokenStorage` (here two JSON files in DIR), a redirect handler that opens the
browser (`webbrowser`, which runs $BROWSER: the bench sets it to its shim, the `xdg-open` that mcp-remote's
`open` runs, which notes each opening and follows `/authorize`'s redirect) and a callback handler (a loopback HTTP
listener on 127.0.0.1, its port kept with the registration, whose redirect URI must match exactly).
The messages go through untouched: the SDK's `stdio_server` streams on one side, `streamable_http_client`'s
on the other, each SessionMessage passed across. Logs go to stderr.

The bench runs it as `PYTHON python-sdk-proxy.py URL --store DIR` with `--python-sdk PYTHON`, a python with
the pinned `mcp` installed (`python3 -m venv V && V/bin/pip install -r Tests/MCP/requirements.txt`).
"""

import argparse
import asyncio
import logging
import sys
import webbrowser
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import anyio
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

# How long a login waits for the browser to come back to the listener.
CALLBACK_SECONDS = 20


class FileTokenStorage(TokenStorage):
    """Tokens and the registration as JSON files in one directory."""

    def __init__(self, directory: Path):
        directory.mkdir(parents=True, exist_ok=True)
        self.tokens = directory / "tokens.json"
        self.client = directory / "client.json"

    @staticmethod
    def _read(path: Path, model):
        return model.model_validate_json(path.read_text()) if path.exists() else None

    @staticmethod
    def _write(path: Path, value) -> None:
        path.touch(mode=0o600)
        path.write_text(value.model_dump_json(exclude_none=True))

    async def get_tokens(self) -> OAuthToken | None:
        return self._read(self.tokens, OAuthToken)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._write(self.tokens, tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._read(self.client, OAuthClientInformationFull)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._write(self.client, client_info)


class Callback:
    """The loopback listener the authorization server redirects the browser to."""

    def __init__(self):
        self.result: asyncio.Future[AuthorizationCodeResult] | None = None

    async def listen(self, port: int) -> int:
        server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        return server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        target = (await reader.readline()).decode().split(" ")[1]
        query = {k: v[0] for k, v in parse_qs(urlparse(target).query).items()}
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\nConnection: close\r\n\r\nYou may close this.\n")
        await writer.drain()
        writer.close()
        if self.result and not self.result.done() and "code" in query:
            self.result.set_result(AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss")))

    async def wait(self) -> AuthorizationCodeResult:
        self.result = asyncio.get_running_loop().create_future()
        with anyio.fail_after(CALLBACK_SECONDS):
            return await self.result


async def open_browser(url: str) -> None:
    logging.info("opening the browser for authorization")
    # webbrowser waits for a BROWSER command to end; the listener must answer it meanwhile.
    await anyio.to_thread.run_sync(webbrowser.open, url)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--store", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="python-sdk-proxy: %(message)s")
    logging.getLogger("httpx2").setLevel(logging.WARNING)

    storage = FileTokenStorage(args.store)
    # The registration's redirect URI names the port: a later process listens on the same one.
    registered = await storage.get_client_info()
    port = urlparse(str(registered.redirect_uris[0])).port if registered and registered.redirect_uris else 0
    callback = Callback()
    port = await callback.listen(port)
    auth = OAuthClientProvider(
        server_url=args.url,
        client_metadata=OAuthClientMetadata(
            client_name="python-sdk-proxy",
            redirect_uris=[f"http://127.0.0.1:{port}/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=open_browser,
        callback_handler=callback.wait,
    )

    async with (
        create_mcp_http_client(auth=auth) as http,
        streamable_http_client(args.url, http_client=http) as (server_read, server_write),
        stdio_server() as (host_read, host_write),
    ):

        async def pass_on(source, destination) -> None:
            async for message in source:
                if isinstance(message, Exception):
                    logging.warning("%s", message)
                else:
                    await destination.send(message)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pass_on, server_read, host_write)
            # The host's end of input ends the proxy (stdio_server waits for its output stream's end).
            await pass_on(host_read, server_write)
            tg.cancel_scope.cancel()
        await host_write.aclose()


if __name__ == "__main__":
    try:
        anyio.run(main)
    except* Exception as failure:
        # The SDK's transport lets a failed login end the task group: the host sees the end of output.
        logging.error("stopped: %r", failure.exceptions)
        sys.exit(1)

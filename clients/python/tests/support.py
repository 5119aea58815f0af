"""What the tests share: the client under test, the agent binary, a dev issuer.

Importing this module puts ``clients/python`` first on ``sys.path``, so the
tests exercise the working tree whether or not the package is installed.
"""

import importlib.util
import json
import os
import pathlib
import select
import subprocess
import sys
import tempfile
import unittest
import urllib.request
from typing import Any, Dict, Optional

CLIENT_ROOT = pathlib.Path(__file__).resolve().parents[1]
SCHEMA_PATH = CLIENT_ROOT / ".." / ".." / "schema" / "openrpc.json"
sys.path.insert(0, str(CLIENT_ROOT))

from auth_agent import find_agent  # noqa: E402

AGENT_BINARY = find_agent()
NO_AGENT = "auth-agent binary not found: set AUTH_AGENT_BIN or put auth-agent on PATH"
requires_agent = unittest.skipIf(AGENT_BINARY is None, NO_AGENT)



def requires_module(name: str) -> Any:
    """Skip unless ``name`` imports: run-tests.sh installs requests and httpx
    into its venv, and says why when it could not."""
    return unittest.skipIf(
        importlib.util.find_spec(name) is None,
        f"{name} is not installed: run-tests.sh installs it from PyPI into its venv",
    )


USERNAME, PASSWORD = "alice", "wonderland"
PROVIDER = "corp"


class DevIssuer:
    """``auth-agent dev-issuer`` on a free loopback port; it serves until its
    stdin closes."""

    def __init__(self) -> None:
        assert AGENT_BINARY is not None
        self._process = subprocess.Popen(
            [AGENT_BINARY, "dev-issuer", "--port", "0"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], 10)
        if not ready:
            self.close()
            raise RuntimeError("dev issuer did not announce its address within 10 s")
        self.url: str = json.loads(self._process.stdout.readline())["issuer"]
        self.api_url = f"{self.url}/api/items"
        #: The issuer's protected API: the user for a valid token, else 401.
        self.me_url = f"{self.url}/api/me"

    def admin(self, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        method = "GET" if body is None else "POST"
        request = urllib.request.Request(f"{self.url}/_admin/{path}", data=data, method=method)
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.load(response)

    def fault(self, **settings: Any) -> None:
        """Inject faults: latencyMs, fail, status, drop, revokeAll, accessTokenLifetime,
        rejectApi (the next N /api requests answer 401 whatever the token)."""
        self.admin("fault", settings)

    def reset(self) -> None:
        self.admin("reset", {})

    def count(self, key: str) -> int:
        return int(self.admin("stats")["counts"].get(key, 0))

    def grants(self, key: str) -> int:
        """Tokens issued under ``key``: ``GRANT:USER`` or ``GRANT:USER:SHAPE``,
        e.g. ``refresh_token:bob`` or ``refresh_token:bob:scope=read``."""
        return int(self.admin("grants")["grants"].get(key, 0))

    def write_config(self, directory: str, refresh_window: int = 60) -> str:
        """A config with one password-grant provider, ``corp``, for this
        issuer, granted the scopes ``read`` and ``write`` (so a token for
        ``read`` alone is a narrower one)."""
        config = {
            "refreshWindowSeconds": refresh_window,
            "store": {"kind": "memory"},
            "providers": [
                {
                    "id": PROVIDER,
                    "displayName": "Corp",
                    "flow": "password",
                    "origins": [self.url],
                    "tokenEndpoint": f"{self.url}/token",
                    "revocationEndpoint": f"{self.url}/revoke",
                    "userinfoEndpoint": f"{self.url}/userinfo",
                    "clientId": "cli",
                    "scopes": ["read", "write"],
                }
            ],
        }
        path = os.path.join(directory, "config.json")
        with open(path, "w") as file:
            json.dump(config, file)
        return path

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()


@requires_agent
class IssuerTestCase(unittest.TestCase):
    """One dev issuer per test class, reset before each test; ``self.config``
    points at a config for it."""

    issuer: DevIssuer
    config: str
    _directory: "tempfile.TemporaryDirectory[str]"

    @classmethod
    def setUpClass(cls) -> None:
        cls._directory = tempfile.TemporaryDirectory()
        cls.issuer = DevIssuer()
        cls.config = cls.issuer.write_config(cls._directory.name)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.issuer.close()
        cls._directory.cleanup()

    def setUp(self) -> None:
        self.issuer.reset()

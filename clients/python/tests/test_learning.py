"""Issue 22: ``login(resource=...)``, ``fetch(login="ifNeeded")`` and the
response's ``login``, and ``forget``, in both clients, against a stand-in agent
that echoes what it was sent (tests/echo_agent.py)."""

import sys
import unittest
from typing import Any

from support import CLIENT_ROOT

from auth_agent import AsyncAuthAgent, AuthAgent

ECHO_AGENT = [str(CLIENT_ROOT / "tests" / "echo_agent.py")]
RESOURCE = "https://api.example.com/mcp"


class LearningSyncTest(unittest.TestCase):
    def test_login_with_a_resource_sends_it_instead_of_a_provider(self) -> None:
        with AuthAgent(sys.executable, args=ECHO_AGENT) as agent:
            result: Any = agent.login(resource=RESOURCE, flow="deviceCode", open_browser=False)
            self.assertEqual(result["provider"], "api.example.com")
            self.assertEqual(
                result["echo"]["params"], {"resource": RESOURCE, "flow": "deviceCode", "openBrowser": False}
            )
            configured: Any = agent.login("corp", username="alice", password="pw")
            self.assertEqual(configured["echo"]["params"]["provider"], "corp")

    def test_login_takes_a_provider_or_a_resource(self) -> None:
        with AuthAgent(sys.executable, args=ECHO_AGENT) as agent:
            with self.assertRaises(TypeError):
                agent.login()
            with self.assertRaises(TypeError):
                agent.login("corp", resource=RESOURCE)

    def test_fetch_carries_login_and_reports_the_hint(self) -> None:
        with AuthAgent(sys.executable, args=ECHO_AGENT) as agent:
            hinted = agent.fetch("GET", RESOURCE)
            self.assertEqual(hinted.status, 401)
            self.assertEqual(
                hinted.login,
                {"resource": RESOURCE, "authorizationServer": "https://auth.example.com", "scopes": ["mcp"]},
            )
            # The stand-in leaves the hint out when the request said login: "ifNeeded".
            self.assertIsNone(agent.fetch("GET", RESOURCE, login="ifNeeded").login)

    def test_fetch_sends_login_if_needed(self) -> None:
        from auth_agent import _params

        params = _params.fetch("GET", RESOURCE, None, None, None, None, None, {}, "ifNeeded")
        self.assertEqual(params["login"], "ifNeeded")
        self.assertNotIn("login", _params.fetch("GET", RESOURCE, None, None, None, None, None, {}))

    def test_forget(self) -> None:
        with AuthAgent(sys.executable, args=ECHO_AGENT) as agent:
            result: Any = agent.forget("api.example.com")
            self.assertEqual((result["forgotten"], result["revoked"]), (True, True))
            self.assertEqual(result["echo"], {"method": "forget", "params": {"provider": "api.example.com"}})


class LearningAsyncTest(unittest.IsolatedAsyncioTestCase):
    async def test_the_same_in_the_asyncio_client(self) -> None:
        async with AsyncAuthAgent(sys.executable, args=ECHO_AGENT) as agent:
            login: Any = await agent.login(resource=RESOURCE)
            self.assertEqual(login["echo"]["params"], {"resource": RESOURCE})
            response = await agent.fetch("GET", RESOURCE)
            self.assertEqual(response.login and response.login["resource"], RESOURCE)
            forgot: Any = await agent.forget("api.example.com")
            self.assertTrue(forgot["forgotten"])
            with self.assertRaises(TypeError):
                await agent.login()


if __name__ == "__main__":
    unittest.main()

"""Issue 22: ``login(resource=...)``, ``fetch(login="ifNeeded")`` and the
response's ``login``, and ``forget``, in both clients, against a stand-in agent
that echoes what it was sent (tests/echo_agent.py), then against the real agent
learning the dev issuer's API."""

import json
import os
import shutil
import sys
import tempfile
import threading
import unittest
import urllib.request
from typing import Any, List

from support import AGENT_BINARY, CLIENT_ROOT, DevIssuer, requires_agent

from auth_agent import AsyncAuthAgent, AuthAgent, DiscoveryFailed

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

        params = _params.fetch("GET", RESOURCE, None, None, None, None, None, {}, "ifNeeded", False)
        self.assertEqual((params["login"], params["openBrowser"]), ("ifNeeded", False))
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


@requires_agent
class LearningLiveTest(unittest.TestCase):
    """The real agent, with no providers configured, learns the dev issuer's
    self-describing API (``/mcp``): the hint, the login (this test plays the
    browser: the issuer approves at once), the step-up, status and forget."""

    def setUp(self) -> None:
        self.issuer = DevIssuer()
        self.addCleanup(self.issuer.close)
        self.issuer.fault(autoApprove="alice")
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        self.config = os.path.join(directory, "config.json")
        with open(self.config, "w") as file:
            json.dump({"store": {"kind": "memory"}}, file)

    def test_learn_log_in_step_up_and_forget(self) -> None:
        resource = f"{self.issuer.url}/mcp"
        with AuthAgent(AGENT_BINARY, args=["--config", self.config]) as agent:
            prompts: List[Any] = []

            def play_browser(prompt: Any) -> None:
                prompts.append(prompt)
                threading.Thread(target=lambda: urllib.request.urlopen(prompt["url"], timeout=10).read()).start()

            agent.on("loginPrompt", play_browser)
            hinted = agent.fetch("GET", resource)
            self.assertEqual(hinted.status, 401)
            self.assertEqual(hinted.login and hinted.login["resource"], resource)

            login = agent.login(resource=resource, open_browser=False, timeout=30)
            self.assertEqual(prompts[0]["resource"], resource)
            me = agent.fetch("GET", resource)
            self.assertEqual((me.status, me.provider), (200, login["provider"]))
            self.assertEqual(me.json()["sub"], "alice")

            admin = agent.fetch("GET", f"{resource}/admin", login="ifNeeded", timeout=30)
            self.assertEqual(admin.status, 200, admin.text)
            self.assertEqual(admin.json()["scope"], "mcp offline_access admin")

            learned = [p for p in agent.status()["providers"] if p["id"] == login["provider"]]
            self.assertEqual(learned[0].get("learned"), True)
            self.assertEqual(agent.forget(login["provider"])["forgotten"], True)
            self.assertEqual([p["id"] for p in agent.status()["providers"]], [])
            self.issuer.fault(discovery="wrong-resource")
            with self.assertRaises(DiscoveryFailed) as caught:
                agent.login(resource=resource, open_browser=False)
            self.assertEqual(caught.exception.data and caught.exception.data.get("step"), "resourceMetadata")


if __name__ == "__main__":
    unittest.main()

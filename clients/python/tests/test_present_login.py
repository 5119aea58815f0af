"""present_login: the host presents its own logins (issue 34).

Against a stand-in agent that asks (tests/asking_agent.py): what the client
declares, how its answers and errors go back, and that requests it does not
know are answered -32601. Against the real agent and a dev issuer: a browser
login opened by a fake opener, one finished with a redirect the host hands
back, a device login shown, a host that does not answer in time (the agent
falls back to loginPrompt), and a host without the capability.
"""

import asyncio
import json
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List

from support import AGENT_BINARY, CLIENT_ROOT, DevIssuer, requires_agent

from auth_agent import AsyncAuthAgent, AuthAgent, RequestCancelled

ASKING_AGENT = [str(CLIENT_ROOT / "tests" / "asking_agent.py")]
ALL = {"presentLogin": {"openUrl": True, "showCode": True, "askRedirect": True}}


def opened(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"opened": True}


class PresentLoginAnswersTest(unittest.IsolatedAsyncioTestCase):
    def start(self, **options: Any) -> AuthAgent:
        agent = AuthAgent(sys.executable, args=ASKING_AGENT, timeout=10, **options)
        self.addCleanup(agent.close)
        return agent

    def test_the_capability_is_declared_only_with_a_callback(self) -> None:
        self.assertEqual(self.start(present_login=opened).initialize()["echo"]["capabilities"], ALL)
        self.assertNotIn("capabilities", self.start().initialize()["echo"])

    def test_the_callback_gets_the_params_and_its_dict_is_the_answer(self) -> None:
        seen: List[Any] = []
        agent = self.start(present_login=lambda params: seen.append(params) or {"redirectUrl": "http://x/cb"})
        answer = agent.login("presentLogin")["answer"]  # type: ignore[index]
        self.assertEqual(answer, {"jsonrpc": "2.0", "id": "agent-1", "result": {"redirectUrl": "http://x/cb"}})
        self.assertEqual((seen[0]["kind"], seen[0]["requestId"]), ("browser", 2))  # 1 was initialize

    def test_a_callback_that_raises_answers_an_error(self) -> None:
        def refuse(params: Any) -> Any:
            raise RuntimeError("no browser on this desk")

        with self.assertLogs("auth_agent", "WARNING"):
            answer = self.start(present_login=refuse).login("presentLogin")["answer"]  # type: ignore[index]
        self.assertEqual(answer["error"]["code"], -32603)
        self.assertIn("no browser on this desk", answer["error"]["message"])

    def test_a_callback_that_returns_no_answer_is_an_error(self) -> None:
        with self.assertLogs("auth_agent", "ERROR"):
            answer = self.start(present_login=lambda params: None).login("presentLogin")["answer"]  # type: ignore
        self.assertEqual(answer["error"]["code"], -32603)

    def test_requests_without_a_handler_are_method_not_found(self) -> None:
        with_callback = self.start(present_login=opened)
        self.assertEqual(with_callback.login("askSomethingNew")["answer"]["error"]["code"], -32601)  # type: ignore
        without = self.start()
        self.assertEqual(without.login("presentLogin")["answer"]["error"]["code"], -32601)  # type: ignore
        self.assertEqual(without.ping(), None)  # still answering

    async def test_async_coroutine_callback(self) -> None:
        async def present(params: Any) -> Dict[str, Any]:
            await asyncio.sleep(0)
            return {"cancelled": True}

        async with AsyncAuthAgent(sys.executable, args=ASKING_AGENT, present_login=present) as agent:
            self.assertEqual((await agent.initialize())["echo"]["capabilities"], ALL)  # type: ignore
            answer = (await agent.login("presentLogin"))["answer"]  # type: ignore[index]
            self.assertEqual(answer["result"], {"cancelled": True})
            self.assertEqual((await agent.login("askSomethingNew"))["answer"]["error"]["code"], -32601)  # type: ignore

    async def test_async_without_callback_declares_nothing_and_refuses(self) -> None:
        async with AsyncAuthAgent(sys.executable, args=ASKING_AGENT) as agent:
            self.assertNotIn("capabilities", (await agent.initialize())["echo"])  # type: ignore
            self.assertEqual((await agent.login("presentLogin"))["answer"]["error"]["code"], -32601)  # type: ignore


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


def redirect_of(url: str) -> str:
    """Where the issuer sends the browser: the loopback redirect a person
    would paste, taken without following it."""
    try:
        urllib.request.build_opener(_NoRedirect).open(url, timeout=10)
    except urllib.error.HTTPError as error:
        return str(error.headers["Location"])
    raise AssertionError("the issuer did not redirect")


def browse(url: str) -> None:
    """The fake opener: a browser that follows the issuer's redirect back to
    the agent's loopback listener."""
    threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=10).read(), daemon=True).start()


@requires_agent
class PresentLoginLiveTest(unittest.TestCase):
    """The real agent asks; the dev issuer approves at once (autoApprove), so
    the host's fake opener is the person."""

    def setUp(self) -> None:
        self.issuer = DevIssuer()
        self.addCleanup(self.issuer.close)
        self.issuer.fault(autoApprove="alice", deviceInterval=1)
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        self.config = os.path.join(directory, "config.json")
        common = {"issuer": self.issuer.url, "clientId": "cli"}
        # An origin belongs to one provider: the device provider's is the issuer by another name.
        other_name = self.issuer.url.replace("127.0.0.1", "localhost")
        with open(self.config, "w") as file:
            json.dump({"store": {"kind": "memory"}, "providers": [
                {"id": "web", "displayName": "Web", "flow": "authorizationCode", "origins": [self.issuer.url], **common},
                {"id": "device", "displayName": "Device", "flow": "deviceCode", "origins": [other_name], **common},
            ]}, file)

    def start(self, **options: Any) -> "tuple[AuthAgent, queue.Queue[Any]]":
        agent = AuthAgent(AGENT_BINARY, config=self.config, capture_stderr=True, timeout=40, **options)
        self.addCleanup(agent.close)
        prompts: "queue.Queue[Any]" = queue.Queue()
        agent.on("loginPrompt", prompts.put)
        return agent, prompts

    def test_a_browser_login_opened_by_the_host_completes(self) -> None:
        asked: List[Any] = []

        def present(params: Dict[str, Any]) -> Dict[str, Any]:
            asked.append(params)
            browse(params["url"])
            return {"opened": True}

        agent, prompts = self.start(present_login=present)
        result = agent.login("web", open_browser=False)
        self.assertEqual(result["user"]["sub"], "alice")  # type: ignore[typeddict-item]
        self.assertEqual([(a["provider"], a["displayName"], a["kind"]) for a in asked], [("web", "Web", "browser")])
        self.assertTrue(asked[0]["url"].startswith(self.issuer.url))
        self.assertTrue(prompts.empty(), "the host presented it: no loginPrompt")

    def test_a_redirect_the_host_hands_back_completes_the_login(self) -> None:
        def present(params: Dict[str, Any]) -> Dict[str, Any]:
            return {"redirectUrl": redirect_of(params["url"])}

        agent, prompts = self.start(present_login=present)
        self.assertEqual(agent.login("web", open_browser=False)["provider"], "web")
        self.assertTrue(prompts.empty())

    def test_a_device_login_shown_by_the_host_completes(self) -> None:
        def present(params: Dict[str, Any]) -> Dict[str, Any]:
            form = {"user_code": params["userCode"], "username": "alice", "password": "wonderland", "action": "approve"}
            data = urllib.parse.urlencode(form).encode()
            threading.Thread(target=lambda: urllib.request.urlopen(params["verificationUri"], data, timeout=10).read(),
                             daemon=True).start()
            return {"opened": True}

        agent, prompts = self.start(present_login=present)
        self.assertEqual(agent.login("device")["user"]["sub"], "alice")  # type: ignore[typeddict-item]
        self.assertTrue(prompts.empty())

    def test_a_host_that_cancels_ends_the_login(self) -> None:
        agent, _ = self.start(present_login=lambda params: {"cancelled": True})
        with self.assertRaises(RequestCancelled):
            agent.login("web", open_browser=False)

    def test_a_host_that_does_not_answer_gets_the_prompt_within_10_s(self) -> None:
        answered = threading.Event()
        asked_at: List[float] = []

        def ignore(params: Dict[str, Any]) -> Dict[str, Any]:
            asked_at.append(time.monotonic())
            answered.wait(30)
            return {"opened": True}  # long after the agent fell back

        agent, prompts = self.start(present_login=ignore)
        self.addCleanup(answered.set)
        call = agent.submit("login", {"provider": "web", "openBrowser": False})
        prompt = prompts.get(timeout=15)
        waited = time.monotonic() - asked_at[0]
        self.assertLess(waited, 11.5)
        self.assertGreater(waited, 8.5)
        browse(prompt["url"])
        self.assertEqual(call.result(20)["provider"], "web")

    def test_a_host_without_the_capability_gets_the_prompt(self) -> None:
        agent, prompts = self.start()
        call = agent.submit("login", {"provider": "web", "openBrowser": False})
        prompt = prompts.get(timeout=5)
        self.assertEqual(prompt["provider"], "web")
        browse(prompt["url"])
        self.assertEqual(call.result(20)["provider"], "web")


if __name__ == "__main__":
    unittest.main()

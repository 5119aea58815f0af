"""fetch and the HTTP adapters (requests, httpx sync and async, urllib)
against the dev issuer's protected API: signed requests succeed, a 401 for
the token sent is followed by one refresh and one resend, a second 401 is
returned, and origins no provider covers go out unsigned."""

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

from support import PASSWORD, PROVIDER, USERNAME, IssuerTestCase, requires_module

from auth_agent import AsyncAuthAgent, AuthAgent, FetchResponse, NotLoggedIn, RequestFailed
from auth_agent.urllib import AgentAuthHandler

#: An origin no provider covers: it must never see a token. Nothing listens
#: there; the adapters' requests to it are not sent, only signed.
UNCOVERED = "http://127.0.0.1:9/api/me"


class HTTPTestCase(IssuerTestCase):
    def start(self) -> AuthAgent:
        agent = AuthAgent(config=self.config, capture_stderr=True, timeout=10)
        self.addCleanup(agent.close)
        agent.login(PROVIDER, username=USERNAME, password=PASSWORD)
        return agent

    def assert_refreshed_once(self, api_calls: int = 2) -> None:
        """One refresh at the token endpoint, and the API called ``api_calls`` times."""
        self.assertEqual(self.issuer.count("token.refresh_token"), 1)
        self.assertEqual(self.issuer.count("api"), api_calls)


class FetchTest(HTTPTestCase):
    def test_signed_request_gets_the_user(self) -> None:
        agent = self.start()
        response = agent.fetch("GET", self.issuer.me_url, headers={"Accept": "application/json"})
        self.assertIsInstance(response, FetchResponse)
        self.assertEqual((response.status, response.signed, response.retried), (200, True, False))
        self.assertEqual((response.provider, response.json()["sub"]), (PROVIDER, USERNAME))
        self.assertTrue(response.headers["content-type"].startswith("application/json"))
        self.assertEqual(json.loads(response.text), response.json())

    def test_401_refreshes_and_resends_once(self) -> None:
        agent = self.start()
        self.issuer.fault(rejectApi=1)
        response = agent.fetch("GET", self.issuer.me_url)
        self.assertEqual((response.status, response.retried), (200, True))
        self.assertEqual(response.json()["preferred_username"], USERNAME)
        self.assert_refreshed_once()

    def test_second_401_is_returned_not_raised(self) -> None:
        agent = self.start()
        self.issuer.fault(rejectApi=2)
        response = agent.fetch("GET", self.issuer.me_url)
        self.assertEqual((response.status, response.retried, response.ok), (401, True, False))
        self.assert_refreshed_once()

    def test_bodies_text_and_bytes(self) -> None:
        agent = self.start()
        echo = f"{self.issuer.url}/api/echo"
        text = agent.fetch("POST", echo, headers={"Content-Type": "text/plain"}, body="héllo")
        self.assertEqual(text.json()["body"], "héllo")
        raw = agent.fetch("POST", echo, headers={"Content-Type": "application/octet-stream"}, body=b"\x00\x01")
        self.assertEqual(raw.json()["body"], "\x00\x01")
        binary = agent.fetch("GET", f"{self.issuer.url}/api/bytes?n=5")
        self.assertEqual(binary.content, b"aaaaa")

    def test_timeout_is_request_failed(self) -> None:
        agent = self.start()
        self.issuer.fault(latencyMs=3000)
        with self.assertRaises(RequestFailed) as caught:
            agent.fetch("GET", self.issuer.me_url, timeout=0.5)
        self.assertEqual((caught.exception.code, caught.exception.retryable), (1011, True))

    def test_not_logged_in_raises_its_subclass(self) -> None:
        agent = AuthAgent(config=self.config, capture_stderr=True, timeout=10)
        self.addCleanup(agent.close)
        with self.assertRaises(NotLoggedIn) as caught:
            agent.fetch("GET", self.issuer.me_url)
        self.assertEqual(caught.exception.reason, "notLoggedIn")

    def test_async_fetch_refreshes_after_401(self) -> None:
        async def run() -> Any:
            async with AsyncAuthAgent(config=self.config, capture_stderr=True, timeout=10) as agent:
                await agent.login(PROVIDER, username=USERNAME, password=PASSWORD)
                self.issuer.fault(rejectApi=1)
                return await agent.fetch("GET", self.issuer.me_url)

        response = asyncio.run(run())
        self.assertEqual((response.status, response.retried), (200, True))
        self.assert_refreshed_once()


class UrllibTest(HTTPTestCase):
    def opener(self) -> urllib.request.OpenerDirector:
        return urllib.request.build_opener(AgentAuthHandler(self.start()))

    def test_signed_request_gets_the_user(self) -> None:
        with self.opener().open(self.issuer.me_url, timeout=10) as response:
            self.assertEqual(json.load(response)["sub"], USERNAME)
        self.assertEqual(self.issuer.count("token.refresh_token"), 0)

    def test_401_refreshes_and_resends_once(self) -> None:
        opener = self.opener()
        self.issuer.fault(rejectApi=1)
        with opener.open(self.issuer.me_url, timeout=10) as response:
            self.assertEqual((response.status, json.load(response)["sub"]), (200, USERNAME))
        self.assert_refreshed_once()

    def test_second_401_raises_http_error(self) -> None:
        opener = self.opener()
        self.issuer.fault(rejectApi=2)
        with self.assertRaises(urllib.error.HTTPError) as caught:
            opener.open(self.issuer.me_url, timeout=10)
        caught.exception.close()
        self.assertEqual(caught.exception.code, 401)
        self.assert_refreshed_once()

    def test_uncovered_origin_is_not_signed(self) -> None:
        request = urllib.request.Request(UNCOVERED)
        AgentAuthHandler(self.start()).http_request(request)
        self.assertIsNone(request.get_header("Authorization"))


@requires_module("requests")
class RequestsTest(HTTPTestCase):
    def session(self) -> Any:
        import requests

        from auth_agent.requests import AgentAuth

        session = requests.Session()
        self.addCleanup(session.close)
        session.auth = AgentAuth(self.start())
        return session

    def test_signed_request_gets_the_user(self) -> None:
        response = self.session().get(self.issuer.me_url, timeout=10)
        self.assertEqual((response.status_code, response.json()["sub"]), (200, USERNAME))
        self.assertEqual(response.history, [])

    def test_401_refreshes_and_resends_once(self) -> None:
        session = self.session()
        self.issuer.fault(rejectApi=1)
        response = session.get(self.issuer.me_url, timeout=10)
        self.assertEqual((response.status_code, response.json()["sub"]), (200, USERNAME))
        self.assertEqual([r.status_code for r in response.history], [401])
        self.assertNotEqual(
            response.request.headers["Authorization"],
            response.history[0].request.headers["Authorization"],
        )
        self.assert_refreshed_once()

    def test_post_body_is_resent(self) -> None:
        session = self.session()
        self.issuer.fault(rejectApi=1)
        response = session.post(f"{self.issuer.url}/api/echo", data=b"payload", timeout=10)
        self.assertEqual((response.status_code, response.json()["body"]), (200, "payload"))

    def test_second_401_is_returned(self) -> None:
        session = self.session()
        self.issuer.fault(rejectApi=2)
        response = session.get(self.issuer.me_url, timeout=10)
        self.assertEqual(response.status_code, 401)
        self.assert_refreshed_once()

    def test_uncovered_origin_is_not_signed(self) -> None:
        import requests

        prepared = requests.Request("GET", UNCOVERED, auth=self.session().auth).prepare()
        self.assertNotIn("Authorization", prepared.headers)


@requires_module("httpx")
class HttpxTest(HTTPTestCase):
    def test_sync_client_refreshes_after_401(self) -> None:
        import httpx

        from auth_agent.httpx import AgentAuth

        with httpx.Client(auth=AgentAuth(self.start()), timeout=10) as client:
            self.assertEqual(client.get(self.issuer.me_url).json()["sub"], USERNAME)
            self.issuer.fault(rejectApi=1)
            response = client.get(self.issuer.me_url)
        self.assertEqual((response.status_code, response.json()["sub"]), (200, USERNAME))
        self.assertEqual([r.status_code for r in response.history], [401])
        self.assert_refreshed_once(api_calls=3)

    def test_sync_client_returns_the_second_401(self) -> None:
        import httpx

        from auth_agent.httpx import AgentAuth

        self.issuer.fault(rejectApi=2)
        with httpx.Client(auth=AgentAuth(self.start()), timeout=10) as client:
            response = client.get(self.issuer.me_url)
        self.assertEqual(response.status_code, 401)
        self.assert_refreshed_once()

    def test_async_client_refreshes_after_401(self) -> None:
        import httpx

        from auth_agent.httpx import AgentAuth

        async def run() -> Any:
            async with AsyncAuthAgent(config=self.config, capture_stderr=True, timeout=10) as agent:
                await agent.login(PROVIDER, username=USERNAME, password=PASSWORD)
                async with httpx.AsyncClient(auth=AgentAuth(agent), timeout=10) as client:
                    self.issuer.fault(rejectApi=1)
                    return await client.get(self.issuer.me_url)

        response = asyncio.run(run())
        self.assertEqual((response.status_code, response.json()["sub"]), (200, USERNAME))
        self.assertEqual([r.status_code for r in response.history], [401])
        self.assert_refreshed_once()

    def test_wrong_kind_of_agent_is_a_clear_type_error(self) -> None:
        import httpx

        from auth_agent.httpx import AgentAuth

        agent = AsyncAuthAgent(config=self.config)
        with httpx.Client(auth=AgentAuth(agent), timeout=10) as client:
            with self.assertRaisesRegex(TypeError, "httpx.Client needs AgentAuth"):
                client.get(self.issuer.me_url)

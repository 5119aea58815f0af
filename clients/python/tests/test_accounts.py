"""Several accounts on one provider and tokens shaped per request, against
the real agent and the dev issuer: the account a request names, the one the
connection selected, the provider's default; scopes narrowed on refresh;
1013 for a shape the server refuses; and the same through every HTTP adapter."""

import asyncio
import base64
import json
import queue
import urllib.request
from typing import Any, Dict, Tuple

from support import PASSWORD, PROVIDER, USERNAME, IssuerTestCase, requires_module

from auth_agent import AsyncAuthAgent, AuthAgent, NotLoggedIn, ScopeNotGranted
from auth_agent.urllib import AgentAuthHandler

WAIT = 5.0
BOB, BOB_PASSWORD = "bob", "builder"
#: Resources and audiences the dev issuer serves besides its own API (ISSUER/api).
FILES, UNKNOWN_RESOURCE = "https://files.example.com", "https://unknown.example.com"


def claims(access_token: str) -> Dict[str, Any]:
    """The payload of the dev issuer's JWT access tokens."""
    payload = access_token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


class AccountsTestCase(IssuerTestCase):
    def start(self) -> AuthAgent:
        agent = AuthAgent(config=self.config, capture_stderr=True, timeout=10)
        self.addCleanup(agent.close)
        return agent

    def two_accounts(self) -> AuthAgent:
        """An agent with alice (logged in first: the default) and bob."""
        agent = self.start()
        agent.login(PROVIDER, username=USERNAME, password=PASSWORD)
        agent.login(PROVIDER, username=BOB, password=BOB_PASSWORD)
        return agent

    def who(self, agent: AuthAgent, **options: Any) -> str:
        """Whom the protected API sees for a fetch with these options."""
        response = agent.fetch("GET", self.issuer.me_url, **options)
        self.assertEqual(response.status, 200, response.text)
        return str(response.json()["preferred_username"])

    @property
    def token_url(self) -> str:
        """The issuer's API that describes the token it was sent: sub, scope, resource, audience."""
        return f"{self.issuer.url}/api/token"

    def provider_status(self, agent: AuthAgent) -> Dict[str, Any]:
        return dict(next(p for p in agent.status()["providers"] if p["id"] == PROVIDER))


class AccountsTest(AccountsTestCase):
    def test_a_second_identity_adds_an_account_and_status_lists_both(self) -> None:
        agent = self.start()
        first = agent.login(PROVIDER, username=USERNAME, password=PASSWORD)
        second = agent.login(PROVIDER, username=BOB, password=BOB_PASSWORD)
        self.assertEqual((first["account"], second["account"]), (USERNAME, BOB))
        status = self.provider_status(agent)
        self.assertEqual((status["state"], status["account"]), ("loggedIn", USERNAME))
        self.assertEqual(
            sorted((a["id"], a["default"]) for a in status["accounts"]),
            [(USERNAME, True), (BOB, False)],
        )

    def test_the_request_s_account_param_picks_whose_token(self) -> None:
        agent = self.two_accounts()
        self.assertEqual(self.who(agent), USERNAME)
        self.assertEqual(self.who(agent, account=BOB), BOB)
        self.assertEqual(claims(agent.token(PROVIDER, account=BOB)["accessToken"])["sub"], BOB)
        signed = agent.sign("GET", self.issuer.me_url, account=BOB)
        self.assertEqual(signed.authorization, f"Bearer {agent.token(PROVIDER, account=BOB)['accessToken']}")
        refreshed = agent.refresh(PROVIDER, signed.authorization, account=BOB)
        self.assertTrue(refreshed["refreshed"])
        self.assertEqual(self.who(agent, account=BOB), BOB)
        self.assertEqual(self.issuer.count("token.refresh_token"), 1)

    def test_login_takes_a_flow_and_an_account_is_named_by_its_user_s_name(self) -> None:
        agent = self.start()
        agent.login(PROVIDER, username=BOB, password=BOB_PASSWORD, flow="password")
        status = self.provider_status(agent)
        self.assertEqual((status["flow"], status["flows"]), ("password", ["password"]))
        self.assertEqual(self.who(agent, account=BOB.upper()), BOB)
        self.assertEqual(agent.select_account(PROVIDER, "Bob"), {"provider": PROVIDER, "account": BOB})

    def test_select_account_is_this_connection_s_choice_until_cleared(self) -> None:
        agent = self.two_accounts()
        self.assertEqual(agent.select_account(PROVIDER, BOB), {"provider": PROVIDER, "account": BOB})
        self.assertEqual(self.who(agent), BOB)
        self.assertEqual(self.who(agent, account=USERNAME), USERNAME)
        status = self.provider_status(agent)
        self.assertEqual((status["account"], status["user"]["preferred_username"]), (BOB, BOB))
        self.assertEqual(agent.select_account(PROVIDER, None), {"provider": PROVIDER, "account": None})
        self.assertEqual(self.who(agent), USERNAME)

    def test_set_default_account_changes_the_default(self) -> None:
        agent = self.two_accounts()
        self.assertEqual(agent.set_default_account(PROVIDER, BOB), {"provider": PROVIDER, "account": BOB})
        self.assertEqual(self.who(agent), BOB)
        defaults = {a["id"]: a["default"] for a in self.provider_status(agent)["accounts"]}
        self.assertEqual(defaults, {USERNAME: False, BOB: True})

    def test_an_account_that_is_not_logged_in_is_not_logged_in(self) -> None:
        agent = self.two_accounts()
        for call in (
            lambda: agent.select_account(PROVIDER, "carol"),
            lambda: agent.set_default_account(PROVIDER, "carol"),
            lambda: agent.token(PROVIDER, account="carol"),
        ):
            with self.assertRaises(NotLoggedIn) as caught:
                call()
            self.assertEqual((caught.exception.code, caught.exception.retryable), (1001, False))

    def test_logout_of_one_account_then_of_all(self) -> None:
        agent = self.two_accounts()
        received: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        agent.on("userLoggedOut", lambda params: received.put(("userLoggedOut", params)))
        agent.subscribe()
        agent.logout(PROVIDER, account=BOB)
        name, params = received.get(timeout=WAIT)
        self.assertEqual((name, params["account"], params["reason"]), ("userLoggedOut", BOB, "logout"))
        self.assertEqual([a["id"] for a in self.provider_status(agent)["accounts"]], [USERNAME])
        agent.login(PROVIDER, username=BOB, password=BOB_PASSWORD)
        agent.logout(PROVIDER, all=True)
        logged_out = {received.get(timeout=WAIT)[1]["account"] for _ in range(2)}
        self.assertEqual(logged_out, {USERNAME, BOB})
        status = self.provider_status(agent)
        self.assertEqual((status["state"], status["accounts"]), ("loggedOut", []))
        self.assertNotIn("account", status)

    def test_events_name_the_account(self) -> None:
        agent = self.start()
        received: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        agent.on("userLoggedIn", lambda params: received.put(("userLoggedIn", params)))
        agent.on("tokenRefreshed", lambda params: received.put(("tokenRefreshed", params)))
        agent.subscribe(events=["userLoggedIn", "tokenRefreshed"])
        agent.login(PROVIDER, username=BOB, password=BOB_PASSWORD)
        self.assertEqual(received.get(timeout=WAIT)[1]["account"], BOB)
        agent.refresh(PROVIDER, account=BOB)
        name, params = received.get(timeout=WAIT)
        self.assertEqual((name, params["account"]), ("tokenRefreshed", BOB))


class ShapedTokensTest(AccountsTestCase):
    """The provider is configured with scopes read and write."""

    def test_a_narrower_scope_is_its_own_token_from_the_refresh_grant(self) -> None:
        agent = self.two_accounts()
        plain = agent.token(PROVIDER)["accessToken"]
        narrow = agent.token(PROVIDER, scopes=["read"])["accessToken"]
        self.assertNotEqual(plain, narrow)
        self.assertEqual((claims(plain)["scope"], claims(narrow)["scope"]), ("read write", "read"))
        self.assertEqual(agent.token(PROVIDER, scopes=["read"])["accessToken"], narrow)
        self.assertEqual(self.issuer.count("token.refresh_token"), 1)
        bobs = agent.token(PROVIDER, account=BOB, scopes=["read"])["accessToken"]
        self.assertEqual((claims(bobs)["sub"], claims(bobs)["scope"]), (BOB, "read"))
        signed = agent.sign("GET", self.issuer.me_url, scopes=["read"])
        self.assertEqual(signed.authorization, f"Bearer {narrow}")
        self.assertEqual(self.who(agent, scopes=["read"]), USERNAME)

    def test_a_scope_the_server_refuses_is_scope_not_granted_and_keeps_the_login(self) -> None:
        agent = self.two_accounts()
        for call in (
            lambda: agent.token(PROVIDER, scopes=["admin"]),
            lambda: agent.sign("GET", self.issuer.me_url, scopes=["admin"]),
            lambda: agent.fetch("GET", self.issuer.me_url, scopes=["admin"]),
        ):
            with self.assertRaises(ScopeNotGranted) as caught:
                call()
            error = caught.exception
            self.assertEqual((error.code, error.reason, error.retryable), (1013, "scopeNotGranted", False))
            self.assertIn("scope", error.message)
        self.assertEqual(self.provider_status(agent)["state"], "loggedIn")
        self.assertEqual(self.who(agent), USERNAME)

    def test_two_resources_and_an_audience_get_three_tokens(self) -> None:
        agent = self.two_accounts()
        own = f"{self.issuer.url}/api"
        described = [
            agent.fetch("GET", self.token_url, **shape).json()
            for shape in ({"resource": own}, {"resource": FILES}, {"audience": "files", "account": BOB}, {})
        ]
        self.assertEqual(
            [(d["sub"], d.get("resource"), d.get("audience")) for d in described],
            [(USERNAME, own, None), (USERNAME, FILES, None), (BOB, None, "files"), (USERNAME, None, None)],
        )
        tokens = {
            agent.token(PROVIDER, resource=own)["accessToken"],
            agent.token(PROVIDER, resource=FILES)["accessToken"],
            agent.token(PROVIDER)["accessToken"],
        }
        self.assertEqual(len(tokens), 3)
        self.assertEqual(agent.sign("GET", self.issuer.me_url, resource=FILES).authorization,
                         f"Bearer {agent.token(PROVIDER, resource=FILES)['accessToken']}")

    def test_an_unknown_resource_or_audience_is_scope_not_granted_with_the_server_s_words(self) -> None:
        agent = self.two_accounts()
        with self.assertRaises(ScopeNotGranted) as caught:
            agent.token(PROVIDER, resource=UNKNOWN_RESOURCE)
        self.assertIn("unknown resource", caught.exception.message)
        with self.assertRaises(ScopeNotGranted) as caught:
            agent.sign("GET", self.issuer.me_url, audience="nobody")
        self.assertIn("unknown audience", caught.exception.message)
        self.assertEqual(self.who(agent), USERNAME)

    def test_scopes_must_be_a_list(self) -> None:
        agent = self.start()
        with self.assertRaises(TypeError):
            agent.token(PROVIDER, scopes="read")


class AsyncAccountsTest(AccountsTestCase):
    def test_async_client_selects_accounts_and_shapes_tokens(self) -> None:
        async def run() -> Tuple[str, str, str, Dict[str, Any]]:
            async with AsyncAuthAgent(config=self.config, capture_stderr=True, timeout=10) as agent:
                await agent.login(PROVIDER, username=USERNAME, password=PASSWORD)
                await agent.login(PROVIDER, username=BOB, password=BOB_PASSWORD)
                await agent.select_account(PROVIDER, BOB)
                selected = (await agent.fetch("GET", self.issuer.me_url)).json()["sub"]
                await agent.select_account(PROVIDER, None)
                await agent.set_default_account(PROVIDER, BOB)
                default = claims((await agent.token(PROVIDER))["accessToken"])["sub"]
                named = (await agent.sign("GET", self.issuer.me_url, account=USERNAME)).authorization or ""
                await agent.logout(PROVIDER, account=USERNAME)
                return selected, default, named, dict((await agent.status())["providers"][0])

        selected, default, named, status = asyncio.run(run())
        self.assertEqual((selected, default, claims(named.split(" ")[1])["sub"]), (BOB, BOB, USERNAME))
        self.assertEqual([a["id"] for a in status["accounts"]], [BOB])


class AdapterAccountsTest(AccountsTestCase):
    """Each HTTP adapter pins an account and a shape for everything it sends,
    also the resend after a 401."""

    def assert_refreshed_as_bob(self) -> None:
        """Bob's tokens came from two refresh grants (his shaped token, then
        the refresh after the 401), alice's from none."""
        self.assertEqual((self.issuer.grants("refresh_token:bob"), self.issuer.grants("refresh_token:alice")), (2, 0))

    def test_urllib_handler_pins_the_account_and_the_shape(self) -> None:
        agent = self.two_accounts()
        opener = urllib.request.build_opener(AgentAuthHandler(agent, account=BOB, resource=FILES))
        self.issuer.fault(rejectApi=1)
        with opener.open(self.token_url, timeout=10) as response:
            described = json.load(response)
        self.assertEqual((described["sub"], described["resource"]), (BOB, FILES))
        self.assert_refreshed_as_bob()
        refused = urllib.request.build_opener(AgentAuthHandler(agent, scopes=["admin"]))
        with self.assertRaises(ScopeNotGranted):
            refused.open(self.issuer.me_url, timeout=10)

    @requires_module("requests")
    def test_requests_auth_pins_the_account_and_the_shape(self) -> None:
        import requests

        from auth_agent.requests import AgentAuth

        agent = self.two_accounts()
        with requests.Session() as session:
            session.auth = AgentAuth(agent, account=BOB, scopes=["read"])
            self.issuer.fault(rejectApi=1)
            response = session.get(self.token_url, timeout=10)
            self.assertEqual([r.status_code for r in response.history], [401])
            self.assertEqual((response.json()["sub"], response.json()["scope"]), (BOB, "read"))
            self.assert_refreshed_as_bob()
            session.auth = AgentAuth(agent, scopes=["admin"])
            with self.assertRaises(ScopeNotGranted):
                session.get(self.issuer.me_url, timeout=10)

    @requires_module("httpx")
    def test_httpx_auth_pins_the_account_and_the_shape_sync_and_async(self) -> None:
        import httpx

        from auth_agent.httpx import AgentAuth

        agent = self.two_accounts()
        with httpx.Client(auth=AgentAuth(agent, account=BOB, audience="files"), timeout=10) as client:
            self.issuer.fault(rejectApi=1)
            response = client.get(self.token_url)
        self.assertEqual([r.status_code for r in response.history], [401])
        self.assertEqual((response.json()["sub"], response.json()["audience"]), (BOB, "files"))
        self.assert_refreshed_as_bob()

        async def run() -> Any:
            async with AsyncAuthAgent(config=self.config, capture_stderr=True, timeout=10) as agent:
                await agent.login(PROVIDER, username=USERNAME, password=PASSWORD)
                await agent.login(PROVIDER, username=BOB, password=BOB_PASSWORD)
                async with httpx.AsyncClient(auth=AgentAuth(agent, account=BOB, scopes=["read"]), timeout=10) as client:
                    me = (await client.get(self.token_url)).json()
                    me = (me["sub"], me["scope"])
                async with httpx.AsyncClient(auth=AgentAuth(agent, scopes=["admin"]), timeout=10) as client:
                    with self.assertRaises(ScopeNotGranted):
                        await client.get(self.issuer.me_url)
                return me

        self.assertEqual(asyncio.run(run()), (BOB, "read"))

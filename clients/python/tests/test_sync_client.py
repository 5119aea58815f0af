"""AuthAgent (synchronous) against the real agent and a dev issuer."""

import functools
import os
import queue
import signal
import time
import unittest
from typing import Any, Tuple

from support import PASSWORD, PROVIDER, USERNAME, IssuerTestCase

from auth_agent import AgentDiedError, AuthAgent, AuthAgentError, PendingCall

WAIT = 5.0


class SyncClientTest(IssuerTestCase):
    def start(self, **options: Any) -> AuthAgent:
        agent = AuthAgent(config=self.config, capture_stderr=True, timeout=10, **options)
        self.addCleanup(agent.close)
        return agent

    def record(self, agent: AuthAgent, *events: str) -> "queue.Queue[Tuple[str, Any]]":
        """A queue that each named notification lands in, as (name, params)."""
        received: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        for event in events:
            agent.on(
                event, functools.partial(lambda name, params: received.put((name, params)), event)
            )
        return received

    def login(self, agent: AuthAgent) -> None:
        agent.login(PROVIDER, username=USERNAME, password=PASSWORD)

    def test_login_then_sign_gives_a_bearer_header(self) -> None:
        agent = self.start()
        self.assertEqual(agent.initialize()["protocolVersion"], "1")
        result = agent.login(PROVIDER, username=USERNAME, password=PASSWORD)
        self.assertEqual(
            (result["provider"], result["user"]["preferred_username"]), (PROVIDER, USERNAME)
        )
        headers = agent.sign("GET", self.issuer.api_url, {"Accept": "application/json"})
        self.assertEqual(list(headers), ["Authorization"])
        self.assertTrue(headers["Authorization"].startswith("Bearer "))
        self.assertEqual(agent.sign("GET", "https://unrelated.example.org/"), {})
        self.assertEqual(agent.status()["providers"][0]["state"], "loggedIn")

    def test_complete_login_names_no_waiting_login_and_is_refused(self) -> None:
        agent = self.start()
        with self.assertRaises(AuthAgentError) as caught:
            agent.complete_login("nope", "http://127.0.0.1:1/callback?code=x&state=y")
        self.assertEqual(caught.exception.code, -32602)
        self.assertIn("no browser login waits under this requestId", caught.exception.message)

    def test_sign_due_for_refresh_emits_token_refreshed(self) -> None:
        agent = self.start()
        received = self.record(agent, "tokenRefreshed")
        agent.subscribe(events=["userLoggedIn", "userLoggedOut", "tokenRefreshed"])
        self.issuer.fault(accessTokenLifetime=0)
        self.login(agent)
        self.issuer.fault(accessTokenLifetime=3600)
        agent.sign("GET", self.issuer.api_url)
        event, params = received.get(timeout=WAIT)
        self.assertEqual((event, params["provider"]), ("tokenRefreshed", PROVIDER))
        self.assertEqual(self.issuer.count("token.refresh_token"), 1)

    def test_logout_emits_user_logged_out_with_reason_logout(self) -> None:
        agent = self.start()
        received = self.record(agent, "userLoggedIn", "userLoggedOut")
        agent.subscribe()
        self.login(agent)
        self.assertEqual(received.get(timeout=WAIT)[0], "userLoggedIn")
        self.assertEqual(agent.logout(PROVIDER), {"revoked": True})
        self.assertEqual(
            received.get(timeout=WAIT),
            ("userLoggedOut", {"provider": PROVIDER, "account": USERNAME, "reason": "logout"}),
        )

    def test_server_revocation_emits_user_logged_out_with_reason_expired(self) -> None:
        agent = self.start()
        received = self.record(agent, "userLoggedOut")
        agent.subscribe()
        self.login(agent)
        self.issuer.fault(revokeAll=True)
        with self.assertRaises(AuthAgentError) as caught:
            agent.refresh(PROVIDER)
        self.assertEqual((caught.exception.code, caught.exception.reason), (1004, "sessionExpired"))
        self.assertEqual(
            received.get(timeout=WAIT),
            ("userLoggedOut", {"provider": PROVIDER, "account": USERNAME, "reason": "expired"}),
        )

    def test_wrong_password_is_invalid_credentials_without_the_password(self) -> None:
        agent = self.start()
        with self.assertRaises(AuthAgentError) as caught:
            agent.login(PROVIDER, username=USERNAME, password="not-the-password")
        error = caught.exception
        self.assertEqual(
            (error.code, error.reason, error.retryable, error.provider),
            (1003, "invalidCredentials", False, PROVIDER),
        )
        self.assertNotIn("not-the-password", f"{error} {error!r}")

    def start_slow_login(self) -> Tuple[AuthAgent, PendingCall]:
        """An agent with a login in flight that the issuer holds for 3 s."""
        agent = self.start()
        self.issuer.fault(latencyMs=3000)
        call = agent.submit(
            "login",
            {"provider": PROVIDER, "credentials": {"username": USERNAME, "password": PASSWORD}},
        )
        time.sleep(0.2)
        return agent, call

    def test_cancel_answers_minus_32800_at_once(self) -> None:
        agent, call = self.start_slow_login()
        started = time.monotonic()
        call.cancel()
        with self.assertRaises(AuthAgentError) as caught:
            call.result(timeout=2)
        self.assertLess(time.monotonic() - started, 1.0)
        self.assertEqual(
            (caught.exception.code, caught.exception.reason), (-32800, "requestCancelled")
        )
        self.assertEqual(agent.status()["providers"][0]["state"], "loggedOut")

    def test_timeout_cancels_the_request(self) -> None:
        agent = self.start()
        self.issuer.fault(latencyMs=3000)
        started = time.monotonic()
        with self.assertRaises(AuthAgentError) as caught:
            agent.login(PROVIDER, username=USERNAME, password=PASSWORD, timeout=0.3)
        self.assertLess(time.monotonic() - started, 1.0)
        self.assertEqual((caught.exception.code, caught.exception.reason), (-32800, "timeout"))
        agent.ping(timeout=1)

    def test_agent_killed_mid_request_fails_the_call_with_agent_died(self) -> None:
        agent, call = self.start_slow_login()
        started = time.monotonic()
        os.kill(agent.pid, signal.SIGKILL)
        with self.assertRaises(AgentDiedError) as caught:
            call.result(timeout=2)
        self.assertLess(time.monotonic() - started, 1.0)
        self.assertEqual(
            (caught.exception.exit_code, caught.exception.reason), (-signal.SIGKILL, "agentDied")
        )
        with self.assertRaises(AgentDiedError):
            agent.ping()

    def test_close_shuts_down_cleanly_and_later_calls_fail(self) -> None:
        with AuthAgent(config=self.config, capture_stderr=True) as agent:
            agent.ping()
        self.assertEqual(agent.returncode, 0)
        with self.assertRaises(AuthAgentError) as caught:
            agent.ping()
        self.assertEqual(caught.exception.reason, "closed")

    def test_missing_binary_is_a_clear_error(self) -> None:
        with self.assertRaises(AuthAgentError) as caught:
            AuthAgent("/nonexistent/auth-agent")
        self.assertEqual(caught.exception.reason, "agentNotFound")

    def test_unknown_notification_names_are_refused_when_registering(self) -> None:
        agent = self.start()
        with self.assertRaises(ValueError):
            agent.on("userLoggedOff", print)


if __name__ == "__main__":
    unittest.main()

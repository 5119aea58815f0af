"""AsyncAuthAgent against the real agent and a dev issuer."""

import asyncio
import os
import signal
import time
import unittest
from typing import Any, List

from support import PASSWORD, PROVIDER, USERNAME, IssuerTestCase

from auth_agent import AgentDiedError, AsyncAuthAgent, AuthAgentError, Notification

WAIT = 5.0


class AsyncClientTest(unittest.IsolatedAsyncioTestCase, IssuerTestCase):
    async def asyncSetUp(self) -> None:
        # The test loop runs in debug mode; spawning a process on a busy
        # machine is not the slow callback its warning is meant to catch.
        asyncio.get_running_loop().slow_callback_duration = 2.0

    async def start(self) -> AsyncAuthAgent:
        agent = await AsyncAuthAgent(config=self.config, capture_stderr=True, timeout=10).start()
        self.addAsyncCleanup(agent.aclose)
        return agent

    async def login(self, agent: AsyncAuthAgent) -> None:
        await agent.login(PROVIDER, username=USERNAME, password=PASSWORD)

    async def next_notification(self, stream: Any) -> Notification:
        notification: Notification = await asyncio.wait_for(stream.__anext__(), WAIT)
        return notification

    async def test_login_then_sign_gives_a_bearer_header(self) -> None:
        agent = await self.start()
        self.assertEqual((await agent.initialize())["serverInfo"]["name"], "auth-agent")
        await self.login(agent)
        headers = await agent.sign("POST", self.issuer.api_url, provider=PROVIDER)
        self.assertTrue(headers["Authorization"].startswith("Bearer "))
        token = await agent.token(PROVIDER)
        self.assertEqual(headers["Authorization"], f"Bearer {token['accessToken']}")

    async def test_notification_stream_sees_login_and_token_refreshed(self) -> None:
        agent = await self.start()
        stream = agent.notifications()
        await agent.subscribe(events=["userLoggedIn", "tokenRefreshed"])
        self.issuer.fault(accessTokenLifetime=0)
        await self.login(agent)
        self.issuer.fault(accessTokenLifetime=3600)
        await agent.sign("GET", self.issuer.api_url)
        logged_in = await self.next_notification(stream)
        refreshed = await self.next_notification(stream)
        self.assertEqual(
            (logged_in.method, logged_in.params["provider"]), ("userLoggedIn", PROVIDER)
        )
        self.assertEqual(
            (refreshed.method, refreshed.params["provider"]), ("tokenRefreshed", PROVIDER)
        )
        self.assertIsNotNone(refreshed.params["expiresAt"])

    async def test_user_logged_out_reaches_callbacks_for_logout_and_expiry(self) -> None:
        agent = await self.start()
        reasons: List[str] = []
        arrived = asyncio.Event()

        async def on_logged_out(params: Any) -> None:
            reasons.append(params["reason"])
            arrived.set()

        agent.on("userLoggedOut", on_logged_out)
        await agent.subscribe(providers=[PROVIDER])
        await self.login(agent)
        await agent.logout(PROVIDER)
        await asyncio.wait_for(arrived.wait(), WAIT)
        arrived.clear()
        await self.login(agent)
        self.issuer.fault(revokeAll=True)
        with self.assertRaises(AuthAgentError) as caught:
            await agent.refresh(PROVIDER)
        self.assertEqual(caught.exception.reason, "sessionExpired")
        await asyncio.wait_for(arrived.wait(), WAIT)
        self.assertEqual(reasons, ["logout", "expired"])

    async def test_wrong_password_is_invalid_credentials(self) -> None:
        agent = await self.start()
        with self.assertRaises(AuthAgentError) as caught:
            await agent.login(PROVIDER, username=USERNAME, password="not-the-password")
        error = caught.exception
        self.assertEqual(
            (error.code, error.reason, error.retryable), (1003, "invalidCredentials", False)
        )

    async def test_cancelling_the_task_cancels_the_request_at_the_agent(self) -> None:
        agent = await self.start()
        self.issuer.fault(latencyMs=3000)
        login = asyncio.ensure_future(self.login(agent))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        login.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await login
        # The agent holds a provider's requests behind its login; an answer at
        # once proves the login was dropped there, not only here.
        with self.assertRaises(AuthAgentError) as caught:
            await agent.token(PROVIDER, timeout=1)
        self.assertEqual(caught.exception.reason, "notLoggedIn")
        self.assertLess(time.monotonic() - started, 1.0)

    async def test_timeout_cancels_the_request(self) -> None:
        agent = await self.start()
        self.issuer.fault(latencyMs=3000)
        with self.assertRaises(AuthAgentError) as caught:
            await agent.login(PROVIDER, username=USERNAME, password=PASSWORD, timeout=0.3)
        self.assertEqual((caught.exception.code, caught.exception.reason), (-32800, "timeout"))
        with self.assertRaises(AuthAgentError) as caught:
            await agent.token(PROVIDER, timeout=1)
        self.assertEqual(caught.exception.reason, "notLoggedIn")

    async def test_agent_killed_mid_request_fails_the_call_with_agent_died(self) -> None:
        agent = await self.start()
        stream = agent.notifications()
        self.issuer.fault(latencyMs=3000)
        login = asyncio.ensure_future(self.login(agent))
        await asyncio.sleep(0.2)
        os.kill(agent.pid, signal.SIGKILL)
        with self.assertRaises(AgentDiedError) as caught:
            await asyncio.wait_for(login, 1.0)
        self.assertEqual(caught.exception.exit_code, -signal.SIGKILL)
        self.assertEqual([n async for n in stream], [])
        with self.assertRaises(AgentDiedError):
            await agent.ping()

    async def test_async_with_shuts_down_cleanly(self) -> None:
        async with AsyncAuthAgent(config=self.config, capture_stderr=True) as agent:
            await agent.ping()
        self.assertEqual(agent.returncode, 0)
        with self.assertRaises(AuthAgentError) as caught:
            await agent.ping()
        self.assertEqual(caught.exception.reason, "closed")


if __name__ == "__main__":
    unittest.main()

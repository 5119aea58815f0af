"""Notifications the client does not know are passed over, not fatal."""

import queue
import sys
import unittest
from typing import Any, List

from support import CLIENT_ROOT

from auth_agent import AsyncAuthAgent, AuthAgent

FAKE_AGENT = [str(CLIENT_ROOT / "tests" / "fake_agent.py")]


class UnknownNotificationTest(unittest.IsolatedAsyncioTestCase):
    def test_sync_client_still_delivers_the_known_ones(self) -> None:
        received: "queue.Queue[Any]" = queue.Queue()
        with AuthAgent(sys.executable, args=FAKE_AGENT) as agent:
            agent.on("userLoggedOut", received.put)
            agent.ping()
            self.assertEqual(received.get(timeout=5), {"provider": "corp", "reason": "external"})
        self.assertEqual(agent.returncode, 0)

    async def test_async_stream_yields_every_notification(self) -> None:
        async with AsyncAuthAgent(sys.executable, args=FAKE_AGENT) as agent:
            stream = agent.notifications()
            await agent.ping()
            methods: List[str] = []
            async for notification in stream:
                methods.append(notification.method)
                if len(methods) == 2:
                    break
        self.assertEqual(methods, ["loginPrompt", "userLoggedOut"])
        self.assertEqual(agent.returncode, 0)

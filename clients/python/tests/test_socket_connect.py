"""AuthAgent.connect(): the socket agent AUTH_AGENT_SOCK names, against a real
``auth-agent serve --socket``; without one, an agent of its own."""

import asyncio
import os
import subprocess
import tempfile
import time
import unittest
from unittest import mock

from support import AGENT_BINARY, NO_AGENT, PASSWORD, PROVIDER, USERNAME, IssuerTestCase

from auth_agent import AsyncAuthAgent, AuthAgent


@unittest.skipIf(AGENT_BINARY is None, NO_AGENT)
class SocketConnectTest(IssuerTestCase):
    def setUp(self) -> None:
        super().setUp()
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.path = os.path.join(directory.name, "run", "agent.sock")
        env = dict(os.environ, AUTH_AGENT_CONFIG=self.config)
        self.server = subprocess.Popen(
            [str(AGENT_BINARY), "serve", "--socket", self.path],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.addCleanup(self.server.wait, 10)
        self.addCleanup(self.server.terminate)
        for _ in range(200):
            if os.path.exists(self.path):
                break
            time.sleep(0.05)

    def connect(self) -> AuthAgent:
        with mock.patch.dict(os.environ, {"AUTH_AGENT_SOCK": self.path}):
            agent = AuthAgent.connect(AGENT_BINARY, timeout=10)
        self.addCleanup(agent.close)
        return agent

    def test_two_connections_share_the_socket_agent(self) -> None:
        first, second = self.connect(), self.connect()
        self.assertEqual(first.pid, self.server.pid, "the socket agent, not a child")
        first.login(PROVIDER, username=USERNAME, password=PASSWORD)
        self.assertTrue(second.token(PROVIDER)["accessToken"])
        self.assertEqual(first.close(), 0)
        second.ping()  # closing one connection leaves the agent serving the others
        self.assertIsNone(self.server.poll())

    def test_without_a_socket_agent_it_starts_one(self) -> None:
        with mock.patch.dict(os.environ, {"AUTH_AGENT_SOCK": self.path + ".absent"}):
            with self.assertLogs("auth_agent", "WARNING"):
                agent = AuthAgent.connect(AGENT_BINARY, config=self.config, timeout=10)
        self.addCleanup(agent.close)
        self.assertNotEqual(agent.pid, self.server.pid)
        agent.ping()

    def test_async_connections_share_the_socket_agent(self) -> None:
        async def run() -> str:
            first = await AsyncAuthAgent.connect(AGENT_BINARY, socket_path=self.path, timeout=10)
            second = await AsyncAuthAgent.connect(AGENT_BINARY, socket_path=self.path, timeout=10)
            self.assertEqual(first.pid, self.server.pid)
            await first.login(PROVIDER, username=USERNAME, password=PASSWORD)
            await first.aclose()
            token = (await second.token(PROVIDER))["accessToken"]
            await second.aclose()
            return token

        self.assertTrue(asyncio.run(run()))
        self.assertIsNone(self.server.poll())


if __name__ == "__main__":
    unittest.main()

"""The client's protocol tables against schema/openrpc.json: a method,
notification or error the schema has and the client lacks fails here."""

import json
import re
import unittest
from typing import Any, Dict

from support import SCHEMA_PATH

from auth_agent import AsyncAuthAgent, AuthAgent, protocol

#: Protocol methods that the clients expose under another name.
CLIENT_NAMES = {"shutdown": ("close", "aclose")}


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class ProtocolTableTest(unittest.TestCase):
    schema: Dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        with open(SCHEMA_PATH) as file:
            cls.schema = json.load(file)

    def test_requests_match_the_schema(self) -> None:
        requests = {m["name"] for m in self.schema["methods"] if not m.get("x-notification")}
        self.assertEqual(requests, set(protocol.METHODS))

    def test_host_notifications_match_the_schema(self) -> None:
        sent = {m["name"] for m in self.schema["methods"] if m.get("x-notification")}
        self.assertEqual(sent, set(protocol.HOST_NOTIFICATIONS))

    def test_agent_notifications_match_the_schema(self) -> None:
        received = {n["name"] for n in self.schema["x-notifications"]}
        self.assertEqual(received, set(protocol.NOTIFICATIONS))

    def test_agent_requests_match_the_schema(self) -> None:
        asked = {r["name"] for r in self.schema["x-host-requests"]}
        self.assertEqual(asked, set(protocol.AGENT_REQUESTS))

    def test_subscribable_events_are_known_notifications(self) -> None:
        events = self.schema["components"]["schemas"]["EventName"]["enum"]
        self.assertLessEqual(set(events), set(protocol.NOTIFICATIONS))

    def test_application_errors_match_the_schema(self) -> None:
        schema_errors = {
            error["code"]: protocol.ErrorKind(error["data"]["reason"], error["data"]["retryable"])
            for error in self.schema["components"]["errors"].values()
        }
        client_errors = {code: kind for code, kind in protocol.ERRORS.items() if code > 0}
        self.assertEqual(schema_errors, client_errors)

    def test_standard_errors_match_the_schema(self) -> None:
        described = {
            int(code) for code in re.findall(r"-32\d{3}", self.schema["info"]["description"])
        }
        self.assertEqual(described, {code for code in protocol.ERRORS if code < 0})

    def test_both_clients_have_a_method_for_each_request(self) -> None:
        for name in protocol.METHODS:
            sync_name, async_name = CLIENT_NAMES.get(name, (snake_case(name),) * 2)
            with self.subTest(method=name):
                self.assertTrue(callable(getattr(AuthAgent, sync_name, None)), sync_name)
                self.assertTrue(callable(getattr(AsyncAuthAgent, async_name, None)), async_name)


if __name__ == "__main__":
    unittest.main()

"""Typed results: aware datetimes, SignResult, FetchResponse, and the agent's
stderr lines as log records."""

import logging
import unittest
from datetime import datetime, timedelta, timezone

from support import PASSWORD, PROVIDER, USERNAME, IssuerTestCase

from auth_agent import AuthAgent, FetchResponse, SignResult
from auth_agent._launch import classify_stderr_line
from auth_agent.results import parse_time, with_datetimes


class ParseTimeTest(unittest.TestCase):
    def test_utc_with_z(self) -> None:
        self.assertEqual(
            parse_time("2026-11-22T08:47:58Z"),
            datetime(2026, 11, 22, 8, 47, 58, tzinfo=timezone.utc),
        )

    def test_fraction_and_offset_become_utc(self) -> None:
        self.assertEqual(
            parse_time("2026-11-22T10:47:58.25+02:00"),
            datetime(2026, 11, 22, 8, 47, 58, 250000, tzinfo=timezone.utc),
        )

    def test_garbage_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            parse_time("tomorrow")

    def test_every_expires_at_is_converted_and_null_stays_none(self) -> None:
        converted = with_datetimes(
            {"providers": [{"expiresAt": "2026-01-01T00:00:00Z"}, {"expiresAt": None}], "x": "1"}
        )
        self.assertEqual(converted["providers"][0]["expiresAt"].tzinfo, timezone.utc)
        self.assertIsNone(converted["providers"][1]["expiresAt"])
        self.assertEqual(converted["x"], "1")


class SignResultTest(unittest.TestCase):
    def test_is_the_headers_mapping_with_the_provider(self) -> None:
        signed = SignResult(
            {"signed": True, "provider": "corp", "headers": {"Authorization": "Bearer t"}, "expiresAt": None}
        )
        self.assertEqual(dict(signed), {"Authorization": "Bearer t"})
        self.assertEqual(signed, {"Authorization": "Bearer t"})
        self.assertEqual((signed.provider, signed.authorization), ("corp", "Bearer t"))
        self.assertNotIn("Bearer t", repr(signed))

    def test_unsigned(self) -> None:
        signed = SignResult({"signed": False, "headers": {}})
        self.assertEqual((dict(signed), signed.provider, signed.signed), ({}, None, False))


class FetchResponseTest(unittest.TestCase):
    def test_base64_body_is_bytes(self) -> None:
        response = FetchResponse({"status": 200, "headers": {}, "bodyBase64": "AAE=", "signed": False, "retried": False})
        self.assertEqual((response.content, response.provider), (b"\x00\x01", None))


class StderrLineTest(unittest.TestCase):
    def test_agent_levels_map_to_logging_levels(self) -> None:
        self.assertEqual(classify_stderr_line("auth-agent: warn: slow"), (logging.WARNING, "slow"))
        self.assertEqual(classify_stderr_line("auth-agent: debug: x: y"), (logging.DEBUG, "x: y"))
        self.assertEqual(classify_stderr_line("config.json: bad"), (logging.WARNING, "config.json: bad"))


class TypedResultsTest(IssuerTestCase):
    def test_login_token_and_status_give_aware_datetimes(self) -> None:
        with AuthAgent(config=self.config, capture_stderr=True, timeout=10) as agent:
            login = agent.login(PROVIDER, username=USERNAME, password=PASSWORD)
            token = agent.token(PROVIDER)
            status = agent.status()
            signed = agent.sign("GET", self.issuer.me_url)
        now = datetime.now(timezone.utc)
        for expires_at in (login["expiresAt"], token["expiresAt"], status["providers"][0]["expiresAt"], signed.expires_at):
            assert expires_at is not None
            self.assertLess(now, expires_at)
            self.assertLess(expires_at, now + timedelta(days=1))
        self.assertEqual(signed.provider, PROVIDER)

    def test_agent_stderr_goes_to_the_auth_agent_agent_logger(self) -> None:
        with self.assertLogs("auth_agent.agent", level="DEBUG") as logs:
            with AuthAgent(config=self.config, args=["--log-level", "debug"], timeout=10) as agent:
                agent.login(PROVIDER, username=USERNAME, password=PASSWORD)
        self.assertTrue(logs.records)
        self.assertTrue(all(record.name == "auth_agent.agent" for record in logs.records))
        self.assertFalse(any("wonderland" in record.getMessage() for record in logs.records))

"""AuthAgentError built from the agent's error objects."""

import unittest

import support  # noqa: F401  (puts the client on sys.path)

import auth_agent
from auth_agent import AgentDiedError, AuthAgentError, AuthServerUnavailable, protocol


class FromResponseTest(unittest.TestCase):
    def test_application_error_takes_reason_and_retryable_from_data(self) -> None:
        error = AuthAgentError.from_response(
            {
                "code": 1005,
                "message": "Corp is unavailable.",
                "data": {"reason": "authServerUnavailable", "retryable": True, "provider": "corp"},
            }
        )
        self.assertEqual(
            (error.code, error.reason, error.retryable, error.provider, error.message),
            (1005, "authServerUnavailable", True, "corp", "Corp is unavailable."),
        )
        self.assertEqual(str(error), "Corp is unavailable.")

    def test_standard_error_without_data_gets_the_table_reason(self) -> None:
        error = AuthAgentError.from_response({"code": -32800, "message": "Request cancelled"})
        self.assertEqual(
            (error.code, error.reason, error.retryable, error.data),
            (-32800, "requestCancelled", False, {}),
        )

    def test_unknown_code_keeps_the_agent_data(self) -> None:
        error = AuthAgentError.from_response(
            {"code": 1099, "message": "New.", "data": {"reason": "somethingNew", "retryable": True}}
        )
        self.assertEqual((error.code, error.reason, error.retryable), (1099, "somethingNew", True))

    def test_malformed_error_still_gives_an_exception(self) -> None:
        error = AuthAgentError.from_response({"code": "x", "data": []})
        self.assertEqual((error.code, error.reason, error.retryable), (None, "unknownError", False))

    def test_died_error_names_the_exit_code_and_last_stderr_line(self) -> None:
        error = AgentDiedError(-9, "starting\nfatal: out of memory\n")
        self.assertIsInstance(error, AuthAgentError)
        self.assertEqual((error.exit_code, error.reason), (-9, "agentDied"))
        self.assertIn("-9", str(error))
        self.assertIn("fatal: out of memory", str(error))


class SubclassTest(unittest.TestCase):
    def test_each_application_error_has_its_subclass_named_after_the_reason(self) -> None:
        for code, kind in protocol.ERRORS.items():
            if code < 0 and code != -32800:
                continue
            with self.subTest(code=code):
                error = AuthAgentError.from_response(
                    {"code": code, "message": "m", "data": {"reason": kind.reason}}
                )
                expected = kind.reason[0].upper() + kind.reason[1:]
                self.assertEqual(type(error).__name__, expected)
                self.assertIs(getattr(auth_agent, expected), type(error))
                self.assertIsInstance(error, AuthAgentError)
                self.assertEqual((error.code, error.reason), (code, kind.reason))

    def test_reason_without_data_still_picks_the_subclass(self) -> None:
        error = AuthAgentError.from_response({"code": 1005, "message": "down"})
        self.assertIsInstance(error, AuthServerUnavailable)
        self.assertTrue(error.retryable)

    def test_unknown_reason_is_the_base_class(self) -> None:
        error = AuthAgentError.from_response({"code": 1099, "data": {"reason": "new"}})
        self.assertIs(type(error), AuthAgentError)


if __name__ == "__main__":
    unittest.main()

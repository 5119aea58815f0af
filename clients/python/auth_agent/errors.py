"""The one exception family the client raises."""

from typing import Any, Dict, Mapping, Optional, Type

from .protocol import AGENT_DIED, AGENT_NOT_FOUND, CLOSED, ERRORS, TIMEOUT


class AuthAgentError(Exception):
    """A request failed: the agent answered an error, or the client gave up.

    ``code`` is the JSON-RPC error code (``None`` when the failure never reached
    the agent), ``reason`` a stable camelCase name to branch on (the agent's
    ``data.reason``, or one of the client's own reasons in ``protocol``),
    ``retryable`` whether trying again unchanged may succeed, ``data`` the
    agent's error data as sent. Messages never contain tokens or passwords: the
    agent's messages do not, and the client's own name only methods.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        code: Optional[int] = None,
        retryable: bool = False,
        data: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.reason = reason
        self.retryable = retryable
        self.data: Dict[str, Any] = dict(data or {})

    @property
    def provider(self) -> Optional[str]:
        """The provider the error concerns, when the agent named one."""
        provider = self.data.get("provider")
        return provider if isinstance(provider, str) else None

    @classmethod
    def from_response(cls, error: Mapping[str, Any]) -> "AuthAgentError":
        """Build the exception for a JSON-RPC ``error`` member."""
        raw_code = error.get("code")
        code = raw_code if isinstance(raw_code, int) else None
        raw_data = error.get("data")
        data: Dict[str, Any] = dict(raw_data) if isinstance(raw_data, dict) else {}
        kind = ERRORS.get(code) if code is not None else None
        reason = data.get("reason")
        if not isinstance(reason, str):
            reason = kind.reason if kind else "unknownError"
        retryable = data.get("retryable")
        if not isinstance(retryable, bool):
            retryable = kind.retryable if kind else False
        message = error.get("message")
        return _CLASSES.get(reason, cls)(
            message if isinstance(message, str) else reason,
            code=code,
            reason=reason,
            retryable=retryable,
            data=data,
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, reason={self.reason!r}, "
            f"retryable={self.retryable!r}, message={self.message!r})"
        )


# One subclass per reason the agent answers with, so callers can write
# ``except NotLoggedIn:``; their ``reason`` is still set for code that branches
# on it. tests/test_errors.py checks there is one for every application error
# in ``protocol.ERRORS``.


class RequestCancelled(AuthAgentError):
    """-32800: the request was cancelled before it completed."""


class NotLoggedIn(AuthAgentError):
    """1001: the provider has no session; log in first."""


class UnknownProvider(AuthAgentError):
    """1002: no provider with that id is configured."""


class InvalidCredentials(AuthAgentError):
    """1003: the server rejected the credentials; nothing changed."""


class SessionExpired(AuthAgentError):
    """1004: the server no longer accepts the session; the user was logged out."""


class AuthServerUnavailable(AuthAgentError):
    """1005: the auth server could not be reached or failed; try again."""


class OriginNotAllowed(AuthAgentError):
    """1006: the named provider does not cover the request's origin."""


class ExcessiveRefresh(AuthAgentError):
    """1007: too many refreshes in a short time; the server was not called."""


class LoginDenied(AuthAgentError):
    """1008: the user or the server refused the interactive login."""


class LoginTimedOut(AuthAgentError):
    """1009: the device code expired or the browser did not come back in time."""


class StoreUnavailable(AuthAgentError):
    """1010: the session store could not be read or written; try again."""


class RequestFailed(AuthAgentError):
    """1011: ``fetch`` could not send the request or got no complete answer in time."""


class ResponseTooLarge(AuthAgentError):
    """1012: ``fetch``'s response was larger than its limit."""


class ScopeNotGranted(AuthAgentError):
    """1013: the server refused the requested scopes, audience or resource; the account stays logged in."""


class DiscoveryFailed(AuthAgentError):
    """1014: learning an API failed at ``data["step"]`` (resourceMetadata, serverMetadata,
    registration or login); the message names the problem and nothing was learned."""


class NotAllowed(AuthAgentError):
    """1015: not allowed on this connection (a forward socket's ``logout``, ``forget``,
    ``setDefaultAccount``, ``login(resource=…)``); nothing was sent or changed."""


class ConfigurationInvalid(AuthAgentError):
    """1016: the configuration is wrong, as the server's answer shows; ``data["configKey"]``
    names the key to fix (``issuer``, ``clientId``, ``flow``). Retrying cannot help."""


def _reason_of(cls: Type[AuthAgentError]) -> str:
    """``NotLoggedIn`` -> ``notLoggedIn``: the class name is the reason."""
    return cls.__name__[0].lower() + cls.__name__[1:]


_CLASSES: Dict[str, Type[AuthAgentError]] = {
    _reason_of(cls): cls
    for cls in (
        RequestCancelled,
        NotLoggedIn,
        UnknownProvider,
        InvalidCredentials,
        SessionExpired,
        AuthServerUnavailable,
        OriginNotAllowed,
        ExcessiveRefresh,
        LoginDenied,
        LoginTimedOut,
        StoreUnavailable,
        RequestFailed,
        ResponseTooLarge,
        ScopeNotGranted,
        DiscoveryFailed,
        NotAllowed,
        ConfigurationInvalid,
    )
}


def error_class(reason: str) -> Type[AuthAgentError]:
    """The exception class raised for ``reason`` (the base class when it has none)."""
    return _CLASSES.get(reason, AuthAgentError)


class AgentDiedError(AuthAgentError):
    """The agent process ended while the client still needed it.

    ``exit_code`` is the process's return code (negative: killed by that signal
    number; ``None`` if it could not be learned) and ``stderr`` the last lines
    it wrote to stderr, kept so a crash can be diagnosed.
    """

    def __init__(self, exit_code: Optional[int], stderr: str) -> None:
        last_line = stderr.strip().splitlines()[-1:] or [""]
        detail = f"; last stderr line: {last_line[0]}" if last_line[0] else ""
        super().__init__(
            f"auth-agent exited with code {exit_code}{detail}",
            reason=AGENT_DIED,
        )
        self.exit_code = exit_code
        self.stderr = stderr


def timed_out(method: str, limit: Optional[float]) -> AuthAgentError:
    """What a call raises when its timeout ran out; the client cancelled it at the agent."""
    return AuthAgentError(
        f"{method} got no answer within {limit} s; it was cancelled",
        code=-32800,
        reason=TIMEOUT,
        retryable=True,
    )


def ended(closing: bool, exit_code: Optional[int], stderr: str) -> AuthAgentError:
    """What calls raise once the agent is gone: closed by the client, or died."""
    if closing:
        return AuthAgentError("the auth-agent client was closed", reason=CLOSED)
    return AgentDiedError(exit_code, stderr)


def cannot_start(program: str, error: OSError) -> AuthAgentError:
    """What starting the client raises when the agent binary cannot be run."""
    return AuthAgentError(f"cannot start {program}: {error.strerror}", reason=AGENT_NOT_FOUND)

"""Python client for auth-agent: a process that keeps the user's logins and
tokens and signs HTTP requests, spoken to with JSON-RPC over stdin/stdout.

``AuthAgent`` is the synchronous client, ``AsyncAuthAgent`` the asyncio one.
Every failure is an ``AuthAgentError``, of the subclass named after its reason
(``NotLoggedIn``, ``SessionExpired``, ...); ``AgentDiedError`` when the process
ended unexpectedly. ``auth_agent.requests``, ``auth_agent.httpx`` and
``auth_agent.urllib`` authenticate those HTTP clients through the agent.
"""

from ._launch import find_agent
from ._version import __version__
from ._wire import Notification
from .aio import AsyncAuthAgent, NotificationStream
from .client import AuthAgent, PendingCall
from .errors import (
    AgentDiedError,
    AuthAgentError,
    AuthServerUnavailable,
    DiscoveryFailed,
    ExcessiveRefresh,
    InvalidCredentials,
    LoginDenied,
    LoginTimedOut,
    ConfigurationInvalid,
    NotAllowed,
    NotLoggedIn,
    OriginNotAllowed,
    RequestCancelled,
    RequestFailed,
    ResponseTooLarge,
    ScopeNotGranted,
    SessionExpired,
    StoreUnavailable,
    UnknownProvider,
)
from .protocol import ERRORS, METHODS, NOTIFICATIONS, PROTOCOL_VERSION
from .results import FetchResponse, SignResult

__all__ = [
    "AgentDiedError",
    "AsyncAuthAgent",
    "AuthAgent",
    "AuthAgentError",
    "AuthServerUnavailable",
    "DiscoveryFailed",
    "ERRORS",
    "ExcessiveRefresh",
    "FetchResponse",
    "InvalidCredentials",
    "LoginDenied",
    "LoginTimedOut",
    "ConfigurationInvalid",
    "NotAllowed",
    "METHODS",
    "NOTIFICATIONS",
    "NotLoggedIn",
    "Notification",
    "NotificationStream",
    "OriginNotAllowed",
    "PROTOCOL_VERSION",
    "PendingCall",
    "RequestCancelled",
    "RequestFailed",
    "ResponseTooLarge",
    "ScopeNotGranted",
    "SessionExpired",
    "SignResult",
    "StoreUnavailable",
    "UnknownProvider",
    "__version__",
    "find_agent",
]

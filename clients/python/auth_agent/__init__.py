"""Python client for auth-agent: a process that keeps the user's logins and
tokens and signs HTTP requests, spoken to with JSON-RPC over stdin/stdout.

``AuthAgent`` is the synchronous client, ``AsyncAuthAgent`` the asyncio one.
Every failure is an ``AuthAgentError``; ``AgentDiedError`` when the process
ended unexpectedly.
"""

from ._launch import find_agent
from ._version import __version__
from ._wire import Notification
from .aio import AsyncAuthAgent, NotificationStream
from .client import AuthAgent, PendingCall
from .errors import AgentDiedError, AuthAgentError
from .protocol import ERRORS, METHODS, NOTIFICATIONS, PROTOCOL_VERSION

__all__ = [
    "AgentDiedError",
    "AsyncAuthAgent",
    "AuthAgent",
    "AuthAgentError",
    "ERRORS",
    "METHODS",
    "NOTIFICATIONS",
    "Notification",
    "NotificationStream",
    "PROTOCOL_VERSION",
    "PendingCall",
    "__version__",
    "find_agent",
]

"""The protocol's vocabulary, listed once.

Every method, notification and error code the client knows comes from these
tables, and ``tests/test_protocol_table.py`` compares them with
``schema/openrpc.json``: when the schema gains a name the client lacks, that
test fails. Adding a notification or an error is one line here.
"""

from typing import Dict, NamedTuple, Tuple

PROTOCOL_VERSION = "1"

#: Requests the host sends; each is answered.
METHODS: Tuple[str, ...] = (
    "initialize",
    "ping",
    "shutdown",
    "status",
    "login",
    "logout",
    "selectAccount",
    "setDefaultAccount",
    "completeLogin",
    "sign",
    "fetch",
    "forget",
    "refresh",
    "token",
    "subscribe",
    "unsubscribe",
)

#: Notifications the host sends; never answered.
HOST_NOTIFICATIONS: Tuple[str, ...] = ("exit", "$/cancelRequest")

#: Notifications the agent sends: the first four to a subscribed host,
#: ``loginPrompt`` to the host whose device-code or browser login is waiting,
#: ``loginWaiting`` to the host whose login waits for another one of the provider.
NOTIFICATIONS: Tuple[str, ...] = (
    "userLoggedIn",
    "userLoggedOut",
    "tokenRefreshed",
    "providersChanged",
    "loginPrompt",
    "loginWaiting",
)

#: Requests the agent sends the host (ids like ``"agent-3"``), each of which
#: the host answers: ``presentLogin`` through the client's ``present_login``
#: callback; the others, and ``presentLogin`` without a callback, with -32601
#: (``loginFields`` is sent only to a host that declares it, which this client
#: does not).
AGENT_REQUESTS: Tuple[str, ...] = ("loginFields", "presentLogin")


class ErrorKind(NamedTuple):
    """What an error code means when the agent's ``data`` does not say."""

    reason: str
    retryable: bool


#: Every error code the agent answers with: the JSON-RPC standard ones and the
#: application ones (1001...), whose reason matches the agent's ``data.reason``.
ERRORS: Dict[int, ErrorKind] = {
    -32700: ErrorKind("parseError", False),
    -32600: ErrorKind("invalidRequest", False),
    -32601: ErrorKind("methodNotFound", False),
    -32602: ErrorKind("invalidParams", False),
    -32603: ErrorKind("internalError", False),
    -32800: ErrorKind("requestCancelled", False),
    1001: ErrorKind("notLoggedIn", False),
    1002: ErrorKind("unknownProvider", False),
    1003: ErrorKind("invalidCredentials", False),
    1004: ErrorKind("sessionExpired", False),
    1005: ErrorKind("authServerUnavailable", True),
    1006: ErrorKind("originNotAllowed", False),
    1007: ErrorKind("excessiveRefresh", False),
    1008: ErrorKind("loginDenied", False),
    1009: ErrorKind("loginTimedOut", False),
    1010: ErrorKind("storeUnavailable", True),
    1011: ErrorKind("requestFailed", True),
    1012: ErrorKind("responseTooLarge", False),
    1013: ErrorKind("scopeNotGranted", False),
    1014: ErrorKind("discoveryFailed", False),
    1015: ErrorKind("notAllowed", False),
    1016: ErrorKind("configurationInvalid", False),
}

#: Reasons for failures the client detects itself (no agent answer carries them).
TIMEOUT = "timeout"
AGENT_DIED = "agentDied"
AGENT_NOT_FOUND = "agentNotFound"
CLOSED = "closed"
PROTOCOL_ERROR = "protocolError"

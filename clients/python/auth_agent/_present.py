"""The host's side of the agent's requests (``presentLogin``), shared by the
sync and async clients: what to declare in ``initialize``, and how a
callback's outcome becomes the answer line.

The agent asks the host to present a login because the host is where the
person is (an editor's window, maybe on another machine than the agent); the
agent stays the one that decides: it falls back to its ``loginPrompt`` and
its own opener when the answer is an error or does not come within 10 s.
"""

import logging
from typing import Any, Callable, Dict, Mapping, Optional

from ._wire import HostRequest, RequestId, encode_error, encode_result

logger = logging.getLogger("auth_agent")

#: What ``present_login`` is called with: the request's params, ``{requestId,
#: provider, displayName, kind, url?, userCode?, verificationUri?,
#: verificationUriComplete?, expiresAt, resource?, authorizationServer?,
#: redirectUri?}``; it returns ``{"opened": True}``, ``{"redirectUrl": url}``
#: or ``{"cancelled": True}``, or raises to answer an error.
PresentLogin = Callable[[Dict[str, Any]], Any]

#: A host with a ``present_login`` callback can do all three: open a URL, show
#: a code, and hand back a redirect URL its person pasted or it captured.
CAPABILITY = {"openUrl": True, "showCode": True, "askRedirect": True}

#: The name ``initialize`` gives the agent when the client sends it itself.
CLIENT_NAME = "auth-agent-python"

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
ANSWERS = ("opened", "redirectUrl", "cancelled")


def capabilities(present_login: Optional[PresentLogin]) -> Dict[str, Any]:
    """What ``initialize`` declares for this host."""
    return {} if present_login is None else {"presentLogin": dict(CAPABILITY)}


def unanswerable(request: HostRequest, present_login: Optional[PresentLogin]) -> Optional[bytes]:
    """The -32601 answer to a request this client has no handler for (a newer
    agent's, or ``presentLogin`` without a callback); ``None`` when the
    callback is to answer it."""
    if request.method == "presentLogin" and present_login is not None:
        return None
    return encode_error(request.id, METHOD_NOT_FOUND, f"this host does not handle {request.method}")


def result_line(id: RequestId, answer: Any) -> bytes:
    """The callback's return value as the answer; anything but one of the
    three answers is the host's bug, answered as an error so the agent falls
    back at once instead of waiting."""
    if isinstance(answer, Mapping) and any(key in answer for key in ANSWERS):
        return encode_result(id, dict(answer))
    logger.error("present_login returned %r, not {opened|redirectUrl|cancelled}", answer)
    return encode_error(id, INTERNAL_ERROR, "present_login returned no opened, redirectUrl or cancelled")


def error_line(id: RequestId, error: BaseException) -> bytes:
    """The callback raised: the agent falls back to its own prompt."""
    logger.warning("present_login raised %s: %s", type(error).__name__, error)
    return encode_error(id, INTERNAL_ERROR, f"presenting the login failed: {error or type(error).__name__}")

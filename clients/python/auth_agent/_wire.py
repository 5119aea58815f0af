"""JSON-RPC 2.0 framing: one JSON object per line, both directions."""

import json
from typing import Any, Dict, Mapping, NamedTuple, Optional, Union

from .errors import AuthAgentError

RequestId = Union[int, str]


class Notification(NamedTuple):
    """A notification from the agent: its ``method`` name and ``params``."""

    method: str
    params: Any


class HostRequest(NamedTuple):
    """A request from the agent to the host (an ``id`` like ``"agent-3"`` and
    a ``method``): the host must answer it, with a result or an error."""

    id: RequestId
    method: str
    params: Any


class Response(NamedTuple):
    """The answer to request ``id``: ``error`` is set when it failed."""

    id: RequestId
    result: Any
    error: Optional[AuthAgentError]


def encode(
    method: str, params: Optional[Mapping[str, Any]], id: Optional[RequestId] = None
) -> bytes:
    """One request (with ``id``) or notification (without), as a line."""
    message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        message["id"] = id
    if params is not None:
        message["params"] = params
    return _line(message)


def encode_result(id: RequestId, result: Any) -> bytes:
    """The host's answer to an agent→host request."""
    return _line({"jsonrpc": "2.0", "id": id, "result": result})


def encode_error(id: RequestId, code: int, message: str) -> bytes:
    """The host's error answer to an agent→host request."""
    return _line({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


def _line(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> Union[Response, Notification, HostRequest, None]:
    """What a line from the agent is; ``None`` for anything the client cannot
    use (blank lines, junk, answers without an id), which it ignores. A
    message with both ``id`` and ``method`` is the agent asking the host."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    method = message.get("method")
    if isinstance(method, str) and "id" not in message:
        return Notification(method, message.get("params"))
    id = message.get("id")
    if not isinstance(id, (int, str)) or isinstance(id, bool):
        return None
    if isinstance(method, str):
        return HostRequest(id, method, message.get("params"))
    error = message.get("error")
    if isinstance(error, dict):
        return Response(id, None, AuthAgentError.from_response(error))
    return Response(id, message.get("result"), None)

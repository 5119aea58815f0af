"""Finding and starting the agent binary, and keeping its stderr."""

import collections
import logging
import os
import re
import shutil
import threading
from typing import Deque, List, Optional, Sequence, Tuple, Union

from .errors import AuthAgentError
from .protocol import AGENT_NOT_FOUND

PathLike = Union[str, "os.PathLike[str]"]

#: How much of the agent's stderr is kept for AgentDiedError.
STDERR_TAIL_LINES = 50


def bundled_agent() -> Optional[str]:
    """The agent a platform wheel (``pip install auth-agent``) carries beside
    this package, when it is there and may be run; the pure-Python wheel
    carries none. (The wheel's console script, ``_auth_agent_command``, finds
    the same file without importing this package.)"""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "auth-agent")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def find_agent(binary: Optional[PathLike] = None) -> Optional[str]:
    """The agent executable: ``binary`` if given, else ``$AUTH_AGENT_BIN``,
    else the one this package carries, else ``auth-agent`` on ``PATH``;
    ``None`` when none of them names one. The carried agent comes before
    ``PATH`` because it is the build this client was released with."""
    if binary is not None:
        return os.fspath(binary)
    from_env = os.environ.get("AUTH_AGENT_BIN")
    if from_env:
        return from_env
    return bundled_agent() or shutil.which("auth-agent")


def agent_command(
    binary: Optional[PathLike], config: Optional[PathLike], args: Sequence[str]
) -> List[str]:
    """The argv that serves JSON-RPC on stdin/stdout.

    Without ``config`` the agent falls back to ``$AUTH_AGENT_CONFIG`` itself.
    """
    executable = find_agent(binary)
    if executable is None:
        raise AuthAgentError(
            "auth-agent not found: pass its path, set AUTH_AGENT_BIN, install the auth-agent wheel, or put it on PATH",
            reason=AGENT_NOT_FOUND,
        )
    command = [executable]
    if config is not None:
        command += ["--config", os.fspath(config)]
    return command + list(args)


#: Where the agent's stderr lines go (unless ``capture_stderr``).
agent_logger = logging.getLogger("auth_agent.agent")

_LEVELS = {
    "error": logging.ERROR,
    "warn": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}
_LEVELED = re.compile(r"auth-agent: (error|warn|info|debug): (.*)", re.DOTALL)


def classify_stderr_line(text: str) -> Tuple[int, str]:
    """The logging level and message of one agent stderr line. The agent
    writes ``auth-agent: LEVEL: message``; other lines (a config error at
    start, the demo's banner) are warnings, so Python's default handler still
    shows them as it showed all of stderr before."""
    match = _LEVELED.fullmatch(text)
    if match is None:
        return logging.WARNING, text
    return _LEVELS[match.group(1)], match.group(2)


def log_stderr_line(line: bytes) -> None:
    level, message = classify_stderr_line(line.decode("utf-8", errors="replace").rstrip("\r\n"))
    agent_logger.log(level, "%s", message)


class StderrTail:
    """The last lines the agent wrote to stderr, thread-safe."""

    def __init__(self, max_lines: int = STDERR_TAIL_LINES) -> None:
        self._lines: Deque[str] = collections.deque(maxlen=max_lines)
        self._lock = threading.Lock()

    def add(self, line: bytes) -> None:
        text = line.decode("utf-8", errors="replace").rstrip("\r\n")
        with self._lock:
            self._lines.append(text)

    def text(self) -> str:
        with self._lock:
            return "\n".join(self._lines)

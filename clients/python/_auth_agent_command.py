"""The ``auth-agent`` console script of the platform wheel: it becomes the
agent the wheel carries (``exec``), so an MCP host, git or kubectl that runs
``auth-agent`` talks to the agent itself — its stdin, stdout, signals and exit
status, with no Python process left in between.

A module of its own beside the ``auth_agent`` package, not inside it: a
console script imports its module's package first, and ``auth_agent``'s
``__init__`` (asyncio, logging, subprocess) cost about 130 ms of every
``auth-agent`` run where this costs nothing beyond Python's own start. So the
carried agent's place is written here as well as in ``auth_agent._launch``
(``bundled_agent``): ``auth_agent/bin/auth-agent`` in the same directory.
"""

import os
import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    agent = os.path.join(os.path.dirname(os.path.abspath(__file__)), "auth_agent", "bin", "auth-agent")
    if not (os.path.isfile(agent) and os.access(agent, os.X_OK)):
        print(f"auth-agent: this installation carries no agent binary at {agent}; install the "
              "auth-agent wheel for your platform again, or put a built agent on PATH", file=sys.stderr)
        return 127
    arguments = sys.argv[1:] if argv is None else argv
    try:
        os.execv(agent, [agent] + arguments)
    except OSError as error:
        print(f"auth-agent: cannot run {agent}: {error.strerror}", file=sys.stderr)
        return 126
    return 0  # not reached: execv replaced this process

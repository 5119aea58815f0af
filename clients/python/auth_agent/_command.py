"""The ``auth-agent`` console script of the platform wheel: it becomes the
agent the wheel carries (``exec``), so an MCP host, git or kubectl that runs
``auth-agent`` talks to the agent itself — its stdin, stdout, signals and exit
status, with no Python process left in between."""

import os
import sys
from typing import List, Optional

from ._launch import bundled_agent


def main(argv: Optional[List[str]] = None) -> int:
    agent = bundled_agent()
    if agent is None:
        print("auth-agent: this installation carries no agent binary (the pure-Python "
              "auth-agent-client wheel); install the auth-agent wheel for your platform, "
              "or put a built agent on PATH", file=sys.stderr)
        return 127
    arguments = sys.argv[1:] if argv is None else argv
    try:
        os.execv(agent, [agent] + arguments)
    except OSError as error:
        print(f"auth-agent: cannot run {agent}: {error.strerror}", file=sys.stderr)
        return 126
    return 0  # not reached: execv replaced this process

"""The README's first example, run as written against `auth-agent demo`."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

from support import AGENT_BINARY, CLIENT_ROOT, NO_AGENT

README = CLIENT_ROOT / "README.md"


def first_python_example() -> str:
    match = re.search(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert match, "README.md has no ```python block"
    return match.group(1)


@unittest.skipIf(AGENT_BINARY is None, NO_AGENT)
class ReadmeTest(unittest.TestCase):
    def test_first_example_runs(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            script = os.path.join(directory, "example.py")
            with open(script, "w") as file:
                file.write(first_python_example())
            # Only what a reader has: the binary and the client; no config.
            env = {key: value for key, value in os.environ.items() if key != "AUTH_AGENT_CONFIG"}
            env.update(AUTH_AGENT_BIN=str(AGENT_BINARY), PYTHONPATH=str(CLIENT_ROOT))
            run = subprocess.run(
                [sys.executable, script], env=env, capture_output=True, text=True, timeout=30
            )
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(
            run.stdout.splitlines(), ["200 Alice", "Logged out of demo (logout)"], run.stderr
        )

"""The README's first example, run as written against a dev issuer."""

import os
import re
import subprocess
import sys
import tempfile

from support import CLIENT_ROOT, DevIssuer, IssuerTestCase

README = CLIENT_ROOT / "README.md"


def first_python_example() -> str:
    match = re.search(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert match, "README.md has no ```python block"
    return match.group(1)


class ReadmeTest(IssuerTestCase):
    issuer: DevIssuer

    def test_first_example_runs(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            script = os.path.join(directory, "example.py")
            with open(script, "w") as file:
                file.write(first_python_example())
            env = dict(
                os.environ,
                AUTH_AGENT_CONFIG=self.config,
                API_URL=self.issuer.api_url,
                PYTHONPATH=str(CLIENT_ROOT),
            )
            run = subprocess.run(
                [sys.executable, script], env=env, capture_output=True, text=True, timeout=20
            )
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("Signed with ['Authorization']", run.stdout)
        self.assertIn("Logged out of corp (logout): show the login screen", run.stdout)

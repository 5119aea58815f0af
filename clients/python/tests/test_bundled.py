"""The agent a platform wheel carries (``auth_agent/bin/auth-agent``): found
after an explicit binary and ``$AUTH_AGENT_BIN`` but before ``PATH``, and run
by the ``auth-agent`` console script with its arguments, streams and exit
status. Each case runs a fresh interpreter on a copy of the package, so the
copy's ``__file__`` decides, as it does in an installed wheel."""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

from support import CLIENT_ROOT

FAKE_AGENT = "#!/bin/sh\necho \"$0 $*\"\nread line\necho \"read $line\"\nexit 7\n"


class BundledAgentTest(unittest.TestCase):
    def setUp(self) -> None:
        self.directory = pathlib.Path(tempfile.mkdtemp(prefix="auth-agent-bundled-"))
        self.addCleanup(shutil.rmtree, self.directory)
        self.site = self.directory / "site"
        shutil.copytree(CLIENT_ROOT / "auth_agent", self.site / "auth_agent")
        shutil.copy(CLIENT_ROOT / "_auth_agent_command.py", self.site)
        self.bundled = self.site / "auth_agent" / "bin" / "auth-agent"
        self.on_path = self.directory / "path" / "auth-agent"
        for executable in (self.bundled, self.on_path):
            executable.parent.mkdir(parents=True, exist_ok=True)
            executable.write_text(FAKE_AGENT)
            executable.chmod(0o755)

    def python(self, code: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess:
        environment = {k: v for k, v in os.environ.items() if k != "AUTH_AGENT_BIN"}
        environment.update(PYTHONPATH=str(self.site), PATH=f"{self.on_path.parent}:/usr/bin:/bin", **env)
        # cwd: `python -c` puts the working directory first on sys.path, and run-tests.sh's is the source tree.
        return subprocess.run([sys.executable, "-c", code], input=stdin, env=environment, cwd=self.directory,
                              capture_output=True, text=True, timeout=30)

    def found(self, **env: str) -> str:
        run = self.python("import auth_agent; print(auth_agent.find_agent())", **env)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout.strip()

    def test_the_bundled_agent_comes_before_path(self) -> None:
        self.assertEqual(self.found(), str(self.bundled))

    def test_auth_agent_bin_and_an_explicit_binary_come_before_the_bundled_agent(self) -> None:
        self.assertEqual(self.found(AUTH_AGENT_BIN="/opt/elsewhere/auth-agent"), "/opt/elsewhere/auth-agent")
        run = self.python("import auth_agent; print(auth_agent.find_agent('/x/auth-agent'))")
        self.assertEqual(run.stdout.strip(), "/x/auth-agent", run.stderr)

    def test_without_a_bundled_agent_path_is_searched(self) -> None:
        self.bundled.unlink()
        self.assertEqual(self.found(), str(self.on_path))

    def test_a_bundled_file_that_cannot_run_is_passed_over(self) -> None:
        self.bundled.chmod(0o644)
        self.assertEqual(self.found(), str(self.on_path))

    def test_auth_agent_starts_the_bundled_agent(self) -> None:
        fake = pathlib.Path(__file__).with_name("fake_agent.py")
        self.bundled.write_text(f"#!/bin/sh\necho 'the bundled agent' >&2\nexec {sys.executable} {fake}\n")
        code = ("from auth_agent import AuthAgent\n"
                "with AuthAgent(capture_stderr=True) as agent:\n"
                "    agent.ping()\n"
                "    print(agent.stderr_tail)\n")
        run = self.python(code)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.strip(), "the bundled agent")

    def test_the_console_script_becomes_the_bundled_agent(self) -> None:
        # The console script's entry point, as pip's generated script calls it.
        run = self.python("import sys; from _auth_agent_command import main; sys.exit(main())", stdin="hello\n")
        self.assertEqual(run.returncode, 7, run.stderr)
        # $0 is the bundled path: the process became the agent, stdin and the status included.
        self.assertEqual(run.stdout.splitlines(), [f"{self.bundled} ", "read hello"], run.stderr)

    def test_the_console_script_passes_its_arguments(self) -> None:
        code = "import sys; sys.argv = ['auth-agent', 'mcp', 'https://x.test/mcp']\nfrom _auth_agent_command import main; main()"
        run = self.python(code, stdin="\n")
        self.assertEqual(run.stdout.splitlines()[0], f"{self.bundled} mcp https://x.test/mcp", run.stderr)

    def test_the_console_script_without_a_bundled_agent_says_what_to_install(self) -> None:
        self.bundled.unlink()
        run = self.python("import sys; from _auth_agent_command import main; sys.exit(main())")
        self.assertEqual(run.returncode, 127, run.stdout)
        self.assertIn("carries no agent", run.stderr)
        self.assertEqual(run.stdout, "")

    def test_the_console_script_does_not_import_the_client(self) -> None:
        # Its start is every `auth-agent` run's: the client's imports (asyncio, logging) stay out.
        code = ("import sys, os; os.execv = lambda *a: None\n"
                "from _auth_agent_command import main; main([])\n"
                "print(sorted(m for m in sys.modules if m.startswith('auth_agent') or m in ('asyncio', 'logging')))")
        run = self.python(code)
        self.assertEqual(run.stdout.strip(), "[]", run.stderr)

"""Runs a command on a pseudo-terminal (its controlling terminal) and plays a script against it:
argv[1] is a JSON list of steps {"expect": text, "send": text, "delay": seconds before sending};
"send" may be "^C" to type Ctrl-C; {"expect", "sendFile": path} sends that file's contents once it exists. With PTY_LOG set, the output is also appended to that file
as it arrives, for a test that must act on what the terminal shows (a device code).
Prints {"output": everything the terminal showed, "status": exit code or -signal} as JSON.
Every wait is bounded (20 s per step) and the child is killed at the end if still running."""
import json
import os
import pty
import select
import signal
import sys
import time

steps, argv = json.loads(sys.argv[1]), sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)

output = b""
log = open(os.environ["PTY_LOG"], "ab", buffering=0) if os.environ.get("PTY_LOG") else None


def read_until(text, deadline):
    global output
    while text.encode() not in output:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            output += chunk
            if log:
                log.write(chunk)
    return True


for step in steps:
    if not read_until(step["expect"], time.monotonic() + 20):
        break
    time.sleep(step.get("delay", 0))
    if "sendFile" in step:
        # What the test computes from the output so far (a redirect URL): sent once the file appears.
        deadline = time.monotonic() + 20
        while not os.path.exists(step["sendFile"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(step["sendFile"], "rb") as f:
            os.write(fd, f.read())
        continue
    os.write(fd, b"\x03" if step["send"] == "^C" else step["send"].encode())
read_until("\x00never", time.monotonic() + 20)
status = None
for _ in range(200):
    done, code = os.waitpid(pid, os.WNOHANG)
    if done:
        status = os.waitstatus_to_exitcode(code)
        break
    time.sleep(0.05)
if status is None:
    os.kill(pid, signal.SIGKILL)
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps({"output": output.decode(errors="replace"), "status": status}))

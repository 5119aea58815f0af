"""Writes the Python client's wheels (PEP 427) with the standard library only,
so clients/package.sh needs neither PyPI nor setuptools:

    python3 wheel.py OUTDIR --version V                      # auth-agent-client, pure Python (py3-none-any)
    python3 wheel.py OUTDIR --version V --agent BIN --platform manylinux_2_36_x86_64
                                                             # auth-agent, with BIN as auth_agent/bin/auth-agent

The metadata comes from pyproject.toml (summary, Python versions, extras,
classifiers, license) and README.md, the files from auth_agent/. The platform
wheel adds the agent and the console script ``auth-agent``
(``_auth_agent_command:main``, which execs it). Entries are sorted and dated
$SOURCE_DATE_EPOCH (else 1980-01-01), so one input gives one wheel. Prints
the wheel's path.
"""

import argparse
import base64
import hashlib
import os
import pathlib
import re
import sys
import time
import tomllib
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
PLATFORM_NAME = "auth-agent"
#: The console script's module, beside the package (its docstring says why).
COMMAND = "_auth_agent_command.py"


PLATFORM_SUMMARY = ("auth-agent, the process programs delegate logins and request signing to "
                    "(the agent itself, for this platform), with its Python client")


def metadata(project: dict, name: str, version: str) -> str:
    summary = PLATFORM_SUMMARY if name == PLATFORM_NAME else project["description"]
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", f"Summary: {summary}"]
    lines.append(f"License: {project['license']['text']}")
    lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    for extra, requirements in sorted(project.get("optional-dependencies", {}).items()):
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in requirements]
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + (HERE / "README.md").read_text()


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def package_files() -> list:
    """auth_agent's sources and py.typed, without caches or a binary left in a working tree."""
    root = HERE / "auth_agent"
    return sorted(p for p in root.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.relative_to(root).parts[0] != "bin")


def write(out: pathlib.Path, version: str, agent: "pathlib.Path | None", platform: "str | None") -> pathlib.Path:
    project = tomllib.loads((HERE / "pyproject.toml").read_text())["project"]
    name = PLATFORM_NAME if agent else project["name"]
    tag = f"py3-none-{platform}" if agent else "py3-none-any"
    stem = f"{re.sub(r'[-_.]+', '_', name)}-{version}"
    dist_info = f"{stem}.dist-info"
    entries = [(f"auth_agent/{p.relative_to(HERE / 'auth_agent').as_posix()}", p.read_bytes(), 0o644) for p in package_files()]
    if agent:
        entries.append(("auth_agent/bin/auth-agent", agent.read_bytes(), 0o755))
        entries.append((COMMAND, (HERE / COMMAND).read_bytes(), 0o644))
        entries.append((f"{dist_info}/entry_points.txt", b"[console_scripts]\nauth-agent = _auth_agent_command:main\n", 0o644))
    wheel = f"Wheel-Version: 1.0\nGenerator: auth-agent clients/python/wheel.py\nRoot-Is-Purelib: {'false' if agent else 'true'}\nTag: {tag}\n"
    entries.append((f"{dist_info}/METADATA", metadata(project, name, version).encode(), 0o644))
    entries.append((f"{dist_info}/WHEEL", wheel.encode(), 0o644))
    record = "\n".join(record_line(path, data) for path, data, _ in entries) + f"\n{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode(), 0o644))

    stamp = time.gmtime(max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800))[:6]
    target = out / f"{stem}-{tag}.whl"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data, mode in entries:
            info = zipfile.ZipInfo(path, date_time=stamp)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--version", required=True)
    parser.add_argument("--agent", type=pathlib.Path, help="the agent binary to carry (a platform wheel)")
    parser.add_argument("--platform", help="the platform tag, e.g. manylinux_2_36_x86_64 (with --agent)")
    args = parser.parse_args()
    if bool(args.agent) != bool(args.platform):
        parser.error("--agent and --platform go together")
    args.out.mkdir(parents=True, exist_ok=True)
    print(write(args.out, args.version, args.agent, args.platform))
    return 0


if __name__ == "__main__":
    sys.exit(main())

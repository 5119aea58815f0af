#!/usr/bin/env bash
# CI entry point for the Python client: runs its unittest suite against the
# agent named by $AUTH_AGENT_BIN (or auth-agent on PATH); without one the
# tests that need it are skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")"
exec "${PYTHON:-python3}" -m unittest discover -s tests -v

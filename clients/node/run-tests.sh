#!/usr/bin/env bash
# CI entry point for the Node client: runs its node:test suite against the
# agent named by $AUTH_AGENT_BIN (or auth-agent on PATH); without one the
# tests that need it are skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")"
exec node --test test/ examples/vscode/test/

#!/usr/bin/env node
/**
 * The `auth-agent` command of the `auth-agent` npm package (`npx auth-agent
 * mcp URL`): runs the agent the platform package carries with this process's
 * arguments and streams, passes the signals a host sends on, and ends as the
 * agent ended (its exit status, or the same signal). Only the carried agent:
 * an `auth-agent` found on PATH could be this very script.
 */
import { spawn } from 'node:child_process';

import { PLATFORM_PACKAGE, bundledAgent } from '../src/locate.js';

const agent = bundledAgent();
if (!agent) {
  process.stderr.write(`auth-agent: ${PLATFORM_PACKAGE} is not installed, so there is no agent for ${process.platform}-${process.arch} ` +
    '(npm skips optional dependencies with --omit=optional or --no-optional); reinstall auth-agent with optional dependencies, ' +
    'or build the agent and set AUTH_AGENT_BIN for the library\n');
  process.exit(127);
}

// The handlers first: the agent may answer (and its host signal this process) before spawn returns,
// and a signal that came before them would end this process by default instead of reaching the agent.
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
let child;
for (const signal of forwarded) process.on(signal, () => child?.kill(signal));
child = spawn(agent, process.argv.slice(2), { stdio: 'inherit' });
child.on('error', (error) => {
  process.stderr.write(`auth-agent: cannot run ${agent}: ${error.message}\n`);
  process.exit(126);
});
child.on('exit', (code, signal) => {
  if (signal) {
    for (const s of forwarded) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});

// AuthAgent.connect(): the socket agent AUTH_AGENT_SOCK names, against a real
// `auth-agent serve --socket`; without one, an agent of its own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { AuthAgent } from '../index.js';
import { findAgent } from '../src/locate.js';
import { CREDENTIALS, DevIssuer, PROVIDER, SKIP, sleep } from '../testing/support.js';

describe('AuthAgent.connect with a socket agent', { skip: SKIP }, () => {
  let issuer;
  let directory;
  let config;
  let server;
  let path;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'auth-agent-node-socket-'));
    issuer = await DevIssuer.start();
    config = issuer.writeConfig(directory);
    path = join(directory, 'run', 'agent.sock');
    server = spawn(findAgent(), ['serve', '--socket', path], { stdio: 'ignore', env: { ...process.env, AUTH_AGENT_CONFIG: config } });
    for (let i = 0; i < 200 && !existsSync(path); i += 1) await sleep(50);
  });
  after(async () => {
    server.kill('SIGTERM');
    await new Promise((resolve) => (server.exitCode !== null ? resolve() : server.once('exit', resolve)));
    await issuer?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('two connections share the socket agent; closing one leaves it serving', async () => {
    const first = await AuthAgent.connect({ socketPath: path, timeout: 10_000 });
    const second = await AuthAgent.connect({ socketPath: path, timeout: 10_000 });
    assert.equal(first.pid, undefined, 'no child of ours');
    await first.login({ provider: PROVIDER, credentials: CREDENTIALS });
    assert.ok((await second.token({ provider: PROVIDER })).accessToken);
    await first.close();
    await second.ping();
    assert.equal(server.exitCode, null);
    await second.close();
  });

  test('AUTH_AGENT_SOCK naming nothing: it starts an agent of its own', async () => {
    const saved = process.env.AUTH_AGENT_SOCK;
    process.env.AUTH_AGENT_SOCK = `${path}.absent`;
    const warnings = [];
    const onWarning = (warning) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      const agent = await AuthAgent.connect({ config, stderr: 'capture' });
      assert.ok(agent.pid > 0, 'a child of ours');
      await agent.ping();
      await agent.close();
      await sleep(10);
      assert.ok(warnings.some((w) => w.includes('not using the agent at')), warnings.join('\n'));
    } finally {
      process.off('warning', onWarning);
      if (saved === undefined) delete process.env.AUTH_AGENT_SOCK; else process.env.AUTH_AGENT_SOCK = saved;
    }
  });
});

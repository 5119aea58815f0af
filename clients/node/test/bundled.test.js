/**
 * The agent the platform package carries (`@auth-agent/linux-x64` and the
 * like, an optional dependency of the `auth-agent` package): found after an
 * explicit `bin` and `$AUTH_AGENT_BIN` but before PATH, and run by the
 * package's `auth-agent` bin with its arguments, streams, exit status and
 * signals. Each case is a project of its own with the client in node_modules,
 * as `npm install` leaves it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';

import { CLIENT_ROOT } from '../testing/support.js';

const PLATFORM_PACKAGE = `@auth-agent/${process.platform}-${process.arch}`;
const FAKE_AGENT = '#!/bin/sh\necho "$0 $*"\nread line\necho "read $line"\nexit 7\n';

describe('the bundled agent', () => {
  let project;
  let client;
  let bundled;
  let onPath;

  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'auth-agent-node-bundled-'));
    client = join(project, 'node_modules', 'auth-agent');
    for (const part of ['index.js', 'src', 'bin', 'package.json']) cpSync(join(CLIENT_ROOT, part), join(client, part), { recursive: true });
    const platform = join(project, 'node_modules', PLATFORM_PACKAGE);
    mkdirSync(join(platform, 'bin'), { recursive: true });
    writeFileSync(join(platform, 'package.json'), JSON.stringify({ name: PLATFORM_PACKAGE, version: '0.0.0' }));
    bundled = join(platform, 'bin', 'auth-agent');
    onPath = join(project, 'path', 'auth-agent');
    mkdirSync(join(project, 'path'));
    for (const file of [bundled, onPath]) {
      writeFileSync(file, FAKE_AGENT);
      chmodSync(file, 0o755);
    }
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  const environment = (extra = {}) => {
    const env = { ...process.env, PATH: `${join(project, 'path')}:/usr/bin:/bin`, ...extra };
    if (!('AUTH_AGENT_BIN' in extra)) delete env.AUTH_AGENT_BIN;
    return env;
  };
  const found = (extra, bin = '') => {
    const code = `import('auth-agent').then((m) => console.log(m.findAgent(${JSON.stringify(bin || undefined)})))`;
    const run = spawnSync(process.execPath, ['-e', code], { cwd: project, env: environment(extra), encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    return run.stdout.trim();
  };

  test('comes before PATH', () => assert.equal(found(), bundled));

  test('comes after AUTH_AGENT_BIN and an explicit bin', () => {
    assert.equal(found({ AUTH_AGENT_BIN: '/opt/elsewhere/auth-agent' }), '/opt/elsewhere/auth-agent');
    assert.equal(found({}, '/x/auth-agent'), '/x/auth-agent');
  });

  test('is passed over when absent or not executable', () => {
    chmodSync(bundled, 0o644);
    assert.equal(found(), onPath);
    rmSync(bundled);
    assert.equal(found(), onPath);
  });

  test("the package's bin runs it with the arguments, stdin and exit status", () => {
    const run = spawnSync(process.execPath, [join(client, 'bin', 'auth-agent.js'), 'mcp', 'https://x.test/mcp'],
      { cwd: project, env: environment(), input: 'hello\n', encoding: 'utf8' });
    assert.equal(run.status, 7, run.stderr);
    assert.deepEqual(run.stdout.split('\n'), [`${bundled} mcp https://x.test/mcp`, 'read hello', '']);
  });

  test("the package's bin passes a SIGTERM on and ends as the agent did", async () => {
    writeFileSync(bundled, "#!/bin/sh\ntrap 'echo got TERM; exit 143' TERM\necho ready\nwhile :; do sleep 0.05; done\n");
    const child = spawn(process.execPath, [join(client, 'bin', 'auth-agent.js')], { cwd: project, env: environment() });
    child.stdout.setEncoding('utf8');
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    await once(child.stdout, 'data', { signal: AbortSignal.timeout(5_000) });
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit', { signal: AbortSignal.timeout(5_000) });
    assert.equal(code, 143);
    assert.match(output, /got TERM/);
  });

  test("the package's bin without a platform package says what to install", () => {
    rmSync(join(project, 'node_modules', '@auth-agent'), { recursive: true });
    const run = spawnSync(process.execPath, [join(client, 'bin', 'auth-agent.js'), '--version'],
      { cwd: project, env: environment(), encoding: 'utf8' });
    assert.equal(run.status, 127);
    assert.match(run.stderr, new RegExp(PLATFORM_PACKAGE));
    assert.equal(run.stdout, '');
  });
});

/** The README's first example, run as written: against `auth-agent demo`, nothing configured. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { AGENT_BIN, CLIENT_ROOT, SKIP } from '../testing/support.js';

function firstJsExample() {
  const match = readFileSync(join(CLIENT_ROOT, 'README.md'), 'utf8').match(/```js\n([\s\S]*?)```/);
  assert.ok(match, 'README.md has no ```js block');
  return match[1];
}

test('the first README example runs', { skip: SKIP }, async () => {
  // Inside the package, so that importing 'auth-agent-client' resolves to it.
  const directory = mkdtempSync(join(CLIENT_ROOT, '.readme-'));
  try {
    const script = join(directory, 'example.mjs');
    writeFileSync(script, firstJsExample());
    const env = { ...process.env, AUTH_AGENT_BIN: AGENT_BIN };
    delete env.AUTH_AGENT_CONFIG;
    const { stdout } = await promisify(execFile)(process.execPath, [script], { env, timeout: 20_000 });
    assert.equal(stdout, '200 alice\nLogged out of demo (logout): show the login screen\n');
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});

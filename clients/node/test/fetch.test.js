/** agent.fetch, notifications() and disposal against the real agent and the dev issuer's protected API. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';

import {
  AuthAgent, AuthAgentError, NotLoggedInError, RequestFailedError, ResponseTooLargeError,
} from '../index.js';
import { CREDENTIALS, DevIssuer, PROVIDER, SKIP, sleep } from '../testing/support.js';

/** A loopback port nobody listens on: bound, then released. */
async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('agent.fetch with the real agent', { skip: SKIP }, () => {
  let issuer;
  let directory;
  let config;
  let agents = [];
  let me;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'auth-agent-node-fetch-'));
    issuer = await DevIssuer.start();
    config = issuer.writeConfig(directory);
    me = `${issuer.url}/api/me`;
  });
  after(async () => {
    await issuer?.close();
    rmSync(directory, { recursive: true, force: true });
  });
  beforeEach(() => issuer.reset());
  afterEach(async () => {
    await Promise.all(agents.map((agent) => agent.close()));
    agents = [];
  });

  async function loggedIn() {
    const agent = await AuthAgent.start({ config, stderr: 'capture', timeout: 10_000 });
    agents.push(agent);
    await agent.login({ provider: PROVIDER, credentials: CREDENTIALS });
    return agent;
  }

  test('a covered URL is signed and answers a standard Response', async () => {
    const agent = await loggedIn();
    const response = await agent.fetch(me);
    assert.ok(response instanceof Response);
    assert.equal(response.status, 200);
    assert.equal(response.ok, true);
    assert.equal(response.url, me);
    assert.match(response.headers.get('content-type'), /^application\/json/);
    assert.equal((await response.json()).preferred_username, CREDENTIALS.username);
    assert.deepEqual(response.authAgent, { provider: PROVIDER, signed: true, retried: false, login: null });
  });

  test('a 401 for the token sent refreshes once and retries: 200', async () => {
    const agent = await loggedIn();
    await issuer.fault({ rejectApi: 1 });
    const response = await agent.fetch(me);
    assert.equal(response.status, 200);
    assert.equal((await response.json()).preferred_username, CREDENTIALS.username);
    assert.deepEqual(response.authAgent, { provider: PROVIDER, signed: true, retried: true, login: null });
    assert.equal(await issuer.count('token.refresh_token'), 1);
    assert.equal(await issuer.count('api'), 2);
  });

  test('a second 401 is returned as is, without a loop', async () => {
    const agent = await loggedIn();
    await issuer.fault({ rejectApi: 5 });
    const response = await agent.fetch(me);
    assert.equal(response.status, 401);
    assert.match(response.headers.get('www-authenticate'), /invalid_token/);
    assert.equal(response.authAgent.retried, true);
    assert.equal(await issuer.count('api'), 2);
  });

  test('method, headers and a JSON body reach the server; a Request works as input', async () => {
    const agent = await loggedIn();
    const body = JSON.stringify({ name: 'Grüße' });
    const init = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body };
    for (const response of [
      await agent.fetch(`${issuer.url}/api/echo`, init),
      await agent.fetch(new Request(`${issuer.url}/api/echo`, init)),
    ]) {
      assert.deepEqual(await response.json(), { method: 'POST', contentType: 'application/json', body });
    }
  });

  test('a binary response arrives byte for byte', async () => {
    const agent = await loggedIn();
    const response = await agent.fetch(`${issuer.url}/api/bytes?n=3000`);
    assert.equal(response.headers.get('content-type'), 'application/octet-stream');
    const bytes = new Uint8Array(await response.arrayBuffer());
    assert.equal(bytes.length, 3000);
    assert.ok(bytes.every((b) => b === 0x61));
  });

  test('sign names the provider for a refresh, out of the headers\' keys', async () => {
    const agent = await loggedIn();
    const headers = await agent.sign({ method: 'GET', url: me });
    assert.deepEqual(Object.keys({ ...headers }), ['Authorization']);
    assert.equal(headers.provider, PROVIDER);
    const refreshed = await agent.refresh({ provider: headers.provider, failedAuthorization: headers.Authorization });
    assert.equal(refreshed.refreshed, true);
    assert.equal((await agent.sign({ method: 'GET', url: 'https://unrelated.example.org/' })).provider, null);
  });

  test('a URL no provider covers is sent unsigned', async () => {
    const agent = await loggedIn();
    const response = await agent.fetch(me.replace('127.0.0.1', 'localhost'));
    assert.equal(response.status, 401);
    assert.deepEqual(response.authAgent, { provider: null, signed: false, retried: false, login: null });
  });

  test('not logged in rejects with NotLoggedInError', async () => {
    const agent = await AuthAgent.start({ config, stderr: 'capture', timeout: 10_000 });
    agents.push(agent);
    const error = await agent.fetch(me).catch((e) => e);
    assert.ok(error instanceof NotLoggedInError, String(error));
    assert.ok(error instanceof AuthAgentError);
    assert.deepEqual([error.code, error.reason, error.provider], [1001, 'notLoggedIn', PROVIDER]);
  });

  test('a body over maxResponseBytes rejects with ResponseTooLargeError', async () => {
    const agent = await loggedIn();
    const error = await agent.fetch(`${issuer.url}/api/bytes?n=5000`, { maxResponseBytes: 1000 }).catch((e) => e);
    assert.ok(error instanceof ResponseTooLargeError, String(error));
    assert.deepEqual([error.code, error.reason, error.retryable], [1012, 'responseTooLarge', false]);
  });

  test('a server that cannot be reached rejects with RequestFailedError', async () => {
    const agent = await loggedIn();
    const error = await agent.fetch(`http://127.0.0.1:${await closedPort()}/`).catch((e) => e);
    assert.ok(error instanceof RequestFailedError, String(error));
    assert.deepEqual([error.code, error.reason, error.retryable], [1011, 'requestFailed', true]);
  });

  test('a slow server past the timeout rejects with RequestFailedError from the agent', async () => {
    const agent = await loggedIn();
    await issuer.fault({ latencyMs: 3000 });
    const error = await agent.fetch(me, { timeout: 500 }).catch((e) => e);
    assert.ok(error instanceof RequestFailedError, String(error));
  });

  test('aborting rejects with the signal reason and cancels at the agent', async () => {
    const agent = await loggedIn();
    await issuer.fault({ latencyMs: 3000 });
    const controller = new AbortController();
    const slow = agent.fetch(me, { signal: controller.signal });
    await sleep(200);
    controller.abort();
    await assert.rejects(slow, { name: 'AbortError' });
    await issuer.fault({ latencyMs: 0 });
    assert.equal((await agent.fetch(me, { timeout: 2000 })).status, 200);
  });
});

describe('notifications() and disposal with the real agent', { skip: SKIP }, () => {
  let issuer;
  let directory;
  let config;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'auth-agent-node-iter-'));
    issuer = await DevIssuer.start();
    config = issuer.writeConfig(directory);
  });
  after(async () => {
    await issuer?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('for await yields notifications and ends when the agent closes', async () => {
    const agent = await AuthAgent.start({ config, stderr: 'capture', timeout: 10_000 });
    await agent.subscribe();
    const seen = [];
    const loop = (async () => {
      for await (const { method, params } of agent.notifications()) seen.push(`${method} ${params.provider}`);
    })();
    await agent.login({ provider: PROVIDER, credentials: CREDENTIALS });
    await agent.logout({ provider: PROVIDER });
    await agent.close();
    await loop;
    assert.deepEqual(seen, [`userLoggedIn ${PROVIDER}`, `userLoggedOut ${PROVIDER}`]);
  });

  test('leaving the loop stops listening; an aborted signal ends it', async () => {
    const agent = await AuthAgent.start({ config, stderr: 'capture' });
    try {
      await agent.subscribe();
      const listeners = agent.listenerCount('notification');
      const login = agent.login({ provider: PROVIDER, credentials: CREDENTIALS });
      for await (const notification of agent.notifications()) {
        assert.equal(notification.method, 'userLoggedIn');
        break;
      }
      await login;
      assert.equal(agent.listenerCount('notification'), listeners);
      const controller = new AbortController();
      const ended = (async () => {
        for await (const notification of agent.notifications({ signal: controller.signal })) assert.fail(notification.method);
      })();
      controller.abort();
      await ended;
    } finally {
      await agent.close();
    }
  });

  test('Symbol.asyncDispose closes the agent', async () => {
    const agent = await AuthAgent.start({ config, stderr: 'capture' });
    assert.equal(typeof Symbol.asyncDispose, 'symbol');
    await agent[Symbol.asyncDispose]();
    assert.deepEqual(await agent.exited, { exitCode: 0, signal: null });
  });

  let usingSupported = true;
  try {
    // eslint-disable-next-line no-new-func
    new Function('return async () => { await using x = null; }');
  } catch {
    usingSupported = false;
  }
  test('await using closes the agent', { skip: usingSupported ? false : `this Node (${process.version}) has no await using` }, async () => {
    const body = 'let inner; { await using agent = await start(); inner = agent; await agent.ping(); } return inner.exited;';
    // eslint-disable-next-line no-new-func
    const run = new Function('start', `return (async () => { ${body} })();`);
    const exited = await run(() => AuthAgent.start({ config, stderr: 'capture' }));
    assert.deepEqual(exited, { exitCode: 0, signal: null });
  });
});

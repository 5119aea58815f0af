/** AuthAgent against the real agent and a dev issuer. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';

import { AgentDiedError, AuthAgent, AuthAgentError } from '../index.js';
import { CREDENTIALS, DevIssuer, FAKE_AGENT, PROVIDER, SKIP, WAIT, sleep } from '../testing/support.js';

/** The next `event` from `agent`, or a rejection after WAIT ms. */
const next = (agent, event) => once(agent, event, { signal: AbortSignal.timeout(WAIT) }).then(([params]) => params);

describe('AuthAgent with the real agent', { skip: SKIP }, () => {
  let issuer;
  let directory;
  let config;
  let agents = [];

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'auth-agent-node-'));
    issuer = await DevIssuer.start();
    config = issuer.writeConfig(directory);
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

  async function start() {
    const agent = await AuthAgent.start({ config, stderr: 'capture', timeout: 10_000 });
    agents.push(agent);
    return agent;
  }
  const login = (agent, options) => agent.login({ provider: PROVIDER, credentials: CREDENTIALS }, options);

  test('login then sign gives a bearer header', async () => {
    const agent = await start();
    assert.equal((await agent.initialize()).protocolVersion, '1');
    const result = await login(agent);
    assert.equal(result.user.preferred_username, CREDENTIALS.username);
    const headers = await agent.sign({ method: 'GET', url: issuer.apiUrl, headers: { Accept: 'application/json' } });
    assert.deepEqual(Object.keys(headers), ['Authorization']);
    assert.match(headers.Authorization, /^Bearer /);
    assert.deepEqual(await agent.sign({ method: 'GET', url: 'https://unrelated.example.org/' }), {});
    const { accessToken } = await agent.token({ provider: PROVIDER });
    assert.equal(headers.Authorization, `Bearer ${accessToken}`);
  });

  test('completeLogin naming no waiting login is refused with invalidParams', async () => {
    const agent = await start();
    await assert.rejects(agent.completeLogin({ requestId: 'nope', redirectUrl: 'http://127.0.0.1:1/callback?code=x&state=y' }),
      (error) => error.code === -32602 && /no browser login waits under this requestId/.test(error.message));
  });

  test('a sign due for refresh emits tokenRefreshed', async () => {
    const agent = await start();
    await agent.subscribe({ events: ['userLoggedIn', 'userLoggedOut', 'tokenRefreshed'] });
    await issuer.fault({ accessTokenLifetime: 0 });
    await login(agent);
    await issuer.fault({ accessTokenLifetime: 3600 });
    const refreshed = next(agent, 'tokenRefreshed');
    await agent.sign({ method: 'GET', url: issuer.apiUrl });
    const params = await refreshed;
    assert.equal(params.provider, PROVIDER);
    assert.equal(typeof params.expiresAt, 'string');
    assert.equal(await issuer.count('token.refresh_token'), 1);
  });

  test('logout emits userLoggedOut with reason logout', async () => {
    const agent = await start();
    await agent.subscribe();
    await login(agent);
    const loggedOut = next(agent, 'userLoggedOut');
    assert.deepEqual(await agent.logout({ provider: PROVIDER }), { revoked: true });
    assert.deepEqual(await loggedOut, { provider: PROVIDER, account: CREDENTIALS.username, reason: 'logout' });
  });

  test('server revocation emits userLoggedOut with reason expired', async () => {
    const agent = await start();
    await agent.subscribe({ providers: [PROVIDER] });
    await login(agent);
    await issuer.fault({ revokeAll: true });
    const loggedOut = next(agent, 'userLoggedOut');
    await assert.rejects(agent.refresh({ provider: PROVIDER }), { code: 1004, reason: 'sessionExpired' });
    assert.deepEqual(await loggedOut, { provider: PROVIDER, account: CREDENTIALS.username, reason: 'expired' });
  });

  test('a wrong password is invalidCredentials, without the password', async () => {
    const agent = await start();
    const attempt = agent.login({ provider: PROVIDER, credentials: { ...CREDENTIALS, password: 'not-the-password' } });
    const error = await attempt.catch((e) => e);
    assert.ok(error instanceof AuthAgentError);
    assert.deepEqual(
      [error.code, error.reason, error.retryable, error.provider],
      [1003, 'invalidCredentials', false, PROVIDER],
    );
    assert.doesNotMatch(`${error.message} ${error.stack}`, /not-the-password/);
  });

  test('aborting a call rejects with AbortError and cancels it at the agent', async () => {
    const agent = await start();
    await issuer.fault({ latencyMs: 3000 });
    const controller = new AbortController();
    const slow = login(agent, { signal: controller.signal });
    await sleep(200);
    const started = Date.now();
    controller.abort();
    await assert.rejects(slow, { name: 'AbortError' });
    // The agent holds a provider's requests behind its login; an answer at
    // once proves the login was dropped there, not only here.
    await assert.rejects(agent.token({ provider: PROVIDER }, { timeout: 1000 }), { reason: 'notLoggedIn' });
    assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
  });

  test('a timeout rejects with -32800 and cancels the request', async () => {
    const agent = await start();
    await issuer.fault({ latencyMs: 3000 });
    await assert.rejects(login(agent, { timeout: 300 }), { code: -32800, reason: 'timeout', retryable: true });
    await assert.rejects(agent.token({ provider: PROVIDER }, { timeout: 1000 }), { reason: 'notLoggedIn' });
  });

  test('the agent killed mid-request rejects pending and later calls', async () => {
    const agent = await start();
    await issuer.fault({ latencyMs: 3000 });
    const slow = login(agent);
    await sleep(200);
    const started = Date.now();
    process.kill(agent.pid, 'SIGKILL');
    const error = await slow.catch((e) => e);
    assert.ok(error instanceof AgentDiedError, String(error));
    assert.deepEqual([error.reason, error.signal, error.exitCode], ['agentDied', 'SIGKILL', null]);
    assert.ok(Date.now() - started < 1000);
    await assert.rejects(agent.ping(), AgentDiedError);
  });

  test('close shuts down cleanly and later calls reject', async () => {
    const agent = await AuthAgent.start({ config, stderr: 'capture' });
    await agent.ping();
    assert.deepEqual(await agent.close(), { exitCode: 0, signal: null });
    await assert.rejects(agent.ping(), { reason: 'closed' });
  });
});

test('a binary that cannot be started is a clear error', async () => {
  await assert.rejects(AuthAgent.start({ bin: '/nonexistent/auth-agent' }), { reason: 'agentNotFound' });
});

test('unknown notifications arrive as "notification" events only', async () => {
  const agent = await AuthAgent.start({ bin: process.execPath, args: [FAKE_AGENT] });
  const seen = [];
  agent.on('notification', ({ method }) => seen.push(method));
  await agent.ping();
  assert.deepEqual(seen, ['loginPrompt', 'error']);
  assert.deepEqual(await agent.close(), { exitCode: 0, signal: null });
});

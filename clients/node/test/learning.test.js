/**
 * Issue 22: `login({resource})`, `fetch`'s `login: 'ifNeeded'` and
 * `response.authAgent.login`, and `forget`, against a stand-in agent that
 * echoes what it was sent (testing/echo-agent.js), then against the real agent
 * learning the dev issuer's self-describing API.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { AuthAgent, DiscoveryFailedError } from '../index.js';
import { AGENT_BIN, DevIssuer, ECHO_AGENT, SKIP } from '../testing/support.js';

const RESOURCE = 'https://api.example.com/mcp';

async function withAgent(body) {
  const agent = await AuthAgent.start({ bin: process.execPath, args: [ECHO_AGENT] });
  try {
    await body(agent);
  } finally {
    await agent.close();
  }
}

test('login with a resource sends it instead of a provider', () => withAgent(async (agent) => {
  const learned = await agent.login({ resource: RESOURCE, flow: 'deviceCode', openBrowser: false });
  assert.equal(learned.provider, 'api.example.com');
  assert.deepEqual(learned.echo.params, { resource: RESOURCE, flow: 'deviceCode', openBrowser: false });
  const configured = await agent.login({ provider: 'corp', credentials: { username: 'alice', password: 'pw' } });
  assert.equal(configured.echo.params.provider, 'corp');
  assert.throws(() => agent.login({}), TypeError);
  assert.throws(() => agent.login({ provider: 'corp', resource: RESOURCE }), TypeError);
}));

test('fetch reports the login hint and sends login: ifNeeded', () => withAgent(async (agent) => {
  const hinted = await agent.fetch(RESOURCE);
  assert.equal(hinted.status, 401);
  assert.deepEqual(hinted.authAgent.login, { resource: RESOURCE, authorizationServer: 'https://auth.example.com', scopes: ['mcp'] });
  assert.equal((await hinted.json()).params.login, undefined);
  const asked = await agent.fetch(RESOURCE, { login: 'ifNeeded', openBrowser: false });
  assert.equal(asked.authAgent.login, null);
  const sent = (await asked.json()).params;
  assert.deepEqual([sent.login, sent.openBrowser], ['ifNeeded', false]);
}));

test('forget', () => withAgent(async (agent) => {
  const forgot = await agent.forget({ provider: 'api.example.com' });
  assert.deepEqual([forgot.forgotten, forgot.revoked], [true, true]);
  assert.deepEqual(forgot.echo, { method: 'forget', params: { provider: 'api.example.com' } });
}));

test('the real agent learns the dev issuer\'s API: hint, login, step-up, forget', { skip: SKIP }, async () => {
  const issuer = await DevIssuer.start();
  const directory = mkdtempSync(join(tmpdir(), 'auth-agent-node-learn-'));
  const agent = await (async () => {
    try {
      await issuer.fault({ autoApprove: 'alice' });
      const config = join(directory, 'config.json');
      writeFileSync(config, JSON.stringify({ store: { kind: 'memory' } }));
      return await AuthAgent.start({ bin: AGENT_BIN, args: ['--config', config] });
    } catch (error) {
      await issuer.close();
      throw error;
    }
  })();
  try {
    const resource = `${issuer.url}/mcp`;
    const prompts = [];
    // Plays the browser: the issuer approves at once and redirects to the agent's listener.
    agent.on('loginPrompt', (prompt) => {
      prompts.push(prompt);
      fetch(prompt.url).then((response) => response.text()).catch(() => {});
    });
    const hinted = await agent.fetch(resource);
    assert.equal(hinted.status, 401);
    assert.equal(hinted.authAgent.login.resource, resource);

    const login = await agent.login({ resource, openBrowser: false }, { timeout: 30_000 });
    assert.equal(prompts[0].resource, resource);
    const me = await agent.fetch(resource);
    assert.deepEqual([me.status, me.authAgent.provider, (await me.json()).sub], [200, login.provider, 'alice']);

    const admin = await agent.fetch(`${resource}/admin`, { login: 'ifNeeded', timeout: 30_000 });
    assert.equal(admin.status, 200);
    assert.equal((await admin.json()).scope, 'mcp offline_access admin');

    assert.equal((await agent.forget({ provider: login.provider })).forgotten, true);
    assert.deepEqual((await agent.status()).providers, []);
    await issuer.fault({ discovery: 'wrong-resource' });
    await assert.rejects(agent.login({ resource, openBrowser: false }),
      (error) => error instanceof DiscoveryFailedError && error.data.step === 'resourceMetadata');
  } finally {
    await agent.close();
    await issuer.close();
    rmSync(directory, { recursive: true, force: true });
  }
});

/**
 * Issue 22: `login({resource})`, `fetch`'s `login: 'ifNeeded'` and
 * `response.authAgent.login`, and `forget`, against a stand-in agent that
 * echoes what it was sent (testing/echo-agent.js).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AuthAgent } from '../index.js';
import { ECHO_AGENT } from '../testing/support.js';

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
  const asked = await agent.fetch(RESOURCE, { login: 'ifNeeded' });
  assert.equal(asked.authAgent.login, null);
  assert.equal((await asked.json()).params.login, 'ifNeeded');
}));

test('forget', () => withAgent(async (agent) => {
  const forgot = await agent.forget({ provider: 'api.example.com' });
  assert.deepEqual([forgot.forgotten, forgot.revoked], [true, true]);
  assert.deepEqual(forgot.echo, { method: 'forget', params: { provider: 'api.example.com' } });
}));

/**
 * onPresentLogin: the host presents its own logins (issue 34). Against a
 * stand-in agent that asks (testing/asking-agent.js): what the client
 * declares, how its answers and errors go back, and that requests it does not
 * know are answered -32601. Against the real agent and a dev issuer that
 * approves at once: a browser login opened by a fake opener, one finished
 * with a redirect the host hands back, a device login shown, a host that
 * cancels, one that does not answer in time (the agent falls back to
 * loginPrompt) and one without the capability.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { AuthAgent } from '../index.js';
import {
  AGENT_BIN, ASKING_AGENT, DevIssuer, SKIP, approveDevice, browse, redirectOf,
} from '../testing/support.js';

const ALL = { presentLogin: { openUrl: true, showCode: true, askRedirect: true } };

async function withAsking(body) {
  const agent = await AuthAgent.start({ bin: process.execPath, args: [ASKING_AGENT], timeout: 10_000 });
  try {
    await body(agent);
  } finally {
    await agent.close();
  }
}

test('the capability is declared only with a handler, in the one initialize', () => withAsking(async (agent) => {
  assert.equal(agent.onPresentLogin(() => ({ opened: true })), agent);
  const first = await agent.initialize();
  assert.deepEqual(first.echo.capabilities, ALL);
  assert.equal(await agent.initialize(), first);
  agent.onPresentLogin(() => ({ cancelled: true })); // replaces the handler
  assert.deepEqual((await agent.login({ provider: 'presentLogin' })).answer.result, { cancelled: true });
}));

test('without a handler nothing is declared, and onPresentLogin after initialize throws', () => withAsking(async (agent) => {
  assert.equal((await agent.initialize()).echo.capabilities, undefined);
  assert.throws(() => agent.onPresentLogin(() => ({ opened: true })), /before initialize/);
  assert.throws(() => agent.onPresentLogin('open'), TypeError);
}));

test('the handler gets the params; what it resolves with is the answer', () => withAsking(async (agent) => {
  const seen = [];
  agent.onPresentLogin(async (params) => {
    seen.push(params);
    return { redirectUrl: 'http://127.0.0.1:1/callback?code=c&state=s' };
  });
  const { answer } = await agent.login({ provider: 'presentLogin' });
  assert.deepEqual(answer, { jsonrpc: '2.0', id: 'agent-1', result: { redirectUrl: 'http://127.0.0.1:1/callback?code=c&state=s' } });
  assert.deepEqual([seen[0].kind, seen[0].requestId, seen[0].displayName], ['browser', 2, 'Corp']);
}));

test('a handler that throws or answers nothing usable answers an error', () => withAsking(async (agent) => {
  let fail = true;
  agent.onPresentLogin(() => {
    if (fail) throw new Error('no browser on this desk');
    return {};
  });
  const thrown = (await agent.login({ provider: 'presentLogin' })).answer.error;
  assert.equal(thrown.code, -32603);
  assert.match(thrown.message, /no browser on this desk/);
  fail = false;
  assert.equal((await agent.login({ provider: 'presentLogin' })).answer.error.code, -32603);
}));

test('requests without a handler are answered method not found', () => withAsking(async (agent) => {
  assert.equal((await agent.login({ provider: 'presentLogin' })).answer.error.code, -32601);
  agent.onPresentLogin(() => ({ opened: true }));
  assert.equal((await agent.login({ provider: 'askSomethingNew' })).answer.error.code, -32601);
}));

describe('against the real agent', { skip: SKIP }, () => {
  let issuer;
  let directory;
  let config;
  const started = [];

  const start = async (handler) => {
    const agent = await AuthAgent.start({ bin: AGENT_BIN, config, stderr: 'capture', timeout: 30_000 });
    started.push(agent);
    const prompts = [];
    agent.on('loginPrompt', (prompt) => prompts.push(prompt));
    if (handler) agent.onPresentLogin(handler);
    return { agent, prompts };
  };

  test.before(async () => {
    issuer = await DevIssuer.start();
    await issuer.fault({ autoApprove: 'alice', deviceInterval: 1 });
    directory = mkdtempSync(join(tmpdir(), 'auth-agent-node-present-'));
    config = issuer.writeInteractiveConfig(directory);
  });
  test.afterEach(async () => {
    await Promise.all(started.splice(0).map((agent) => agent.close()));
  });
  test.after(async () => {
    await issuer.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('a browser login the host opens completes, with no loginPrompt', async () => {
    const asked = [];
    const { agent, prompts } = await start((params) => {
      asked.push(params);
      browse(params.url);
      return { opened: true };
    });
    const login = await agent.login({ provider: 'web', openBrowser: false });
    assert.equal(login.user.sub, 'alice');
    assert.deepEqual(asked.map((a) => [a.provider, a.displayName, a.kind]), [['web', 'Web', 'browser']]);
    assert.ok(asked[0].url.startsWith(issuer.url));
    assert.deepEqual(prompts, []);
  });

  test('a redirect the host hands back completes the login', async () => {
    const { agent, prompts } = await start(async (params) => ({ redirectUrl: await redirectOf(params.url) }));
    assert.equal((await agent.login({ provider: 'web', openBrowser: false })).provider, 'web');
    assert.deepEqual(prompts, []);
  });

  test('a device login the host shows completes', async () => {
    const { agent, prompts } = await start((params) => {
      assert.equal(params.kind, 'deviceCode');
      approveDevice(params.verificationUri, params.userCode);
      return { opened: true };
    });
    assert.equal((await agent.login({ provider: 'device' })).user.sub, 'alice');
    assert.deepEqual(prompts, []);
  });

  test('a host that cancels ends the login with -32800', async () => {
    const { agent } = await start(() => ({ cancelled: true }));
    await assert.rejects(agent.login({ provider: 'web', openBrowser: false }, { timeout: 10_000 }),
      (error) => error.code === -32800 && error.reason === 'requestCancelled');
  });

  test('a host that does not answer gets the loginPrompt within 10 s', async () => {
    let askedAt;
    let release;
    const { agent } = await start(() => {
      askedAt = Date.now();
      return new Promise((resolve, reject) => { release = () => reject(new Error('too late')); });
    });
    const login = agent.login({ provider: 'web', openBrowser: false });
    const [prompt] = await once(agent, 'loginPrompt', { signal: AbortSignal.timeout(15_000) });
    const waited = Date.now() - askedAt;
    assert.ok(waited > 8_500 && waited < 11_500, `fell back after ${waited} ms`);
    browse(prompt.url);
    assert.equal((await login).provider, 'web');
    release();
  });

  test('a host without the capability gets the loginPrompt as before', async () => {
    const { agent } = await start();
    const login = agent.login({ provider: 'web', openBrowser: false });
    const [prompt] = await once(agent, 'loginPrompt', { signal: AbortSignal.timeout(5_000) });
    browse(prompt.url);
    assert.equal((await login).provider, 'web');
  });
});

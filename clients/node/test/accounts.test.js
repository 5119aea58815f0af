/**
 * Several accounts on one provider and tokens shaped per request, against the
 * real agent and the dev issuer: the account a request names, the one this
 * connection selected, the provider's default; scopes narrowed on refresh;
 * 1013 for a shape the server refuses; the same through fetch and fetcher().
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';

import { AuthAgent, NotLoggedInError, ScopeNotGrantedError } from '../index.js';
import { BOB, CREDENTIALS, DevIssuer, PROVIDER, SKIP, WAIT, claims } from '../testing/support.js';

const ALICE = CREDENTIALS.username;
/** A resource the dev issuer serves besides its own API (ISSUER/api), and one it does not. */
const FILES = 'https://files.example.com';
const UNKNOWN_RESOURCE = 'https://unknown.example.com';
/** The next `event` from `agent`, or a rejection after WAIT ms. */
const next = (agent, event) => once(agent, event, { signal: AbortSignal.timeout(WAIT) }).then(([params]) => params);

describe('accounts and shaped tokens with the real agent', { skip: SKIP }, () => {
  let issuer;
  let directory;
  let config;
  let me;
  /** The issuer's API that describes the token it was sent: sub, scope, resource, audience. */
  let tokenUrl;
  let agents = [];

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'auth-agent-node-accounts-'));
    issuer = await DevIssuer.start();
    config = issuer.writeConfig(directory);
    me = `${issuer.url}/api/me`;
    tokenUrl = `${issuer.url}/api/token`;
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
  /** An agent with alice (logged in first: the default) and bob. */
  async function twoAccounts() {
    const agent = await start();
    await agent.login({ provider: PROVIDER, credentials: CREDENTIALS });
    await agent.login({ provider: PROVIDER, credentials: BOB });
    return agent;
  }
  /** Whom the protected API sees for a fetch with this init. */
  async function who(fetchFunction, init) {
    const response = await fetchFunction(me, init);
    assert.equal(response.status, 200);
    return (await response.json()).preferred_username;
  }
  async function providerStatus(agent) {
    return (await agent.status()).providers.find((p) => p.id === PROVIDER);
  }

  test('a second identity adds an account; status lists both', async () => {
    const agent = await start();
    assert.equal((await agent.login({ provider: PROVIDER, credentials: CREDENTIALS })).account, ALICE);
    assert.equal((await agent.login({ provider: PROVIDER, credentials: BOB })).account, BOB.username);
    const status = await providerStatus(agent);
    assert.deepEqual([status.state, status.account], ['loggedIn', ALICE]);
    assert.deepEqual(
      status.accounts.map((a) => [a.id, a.default]).sort(),
      [[ALICE, true], [BOB.username, false]],
    );
  });

  test('the account param picks whose token: sign, token, refresh, fetch', async () => {
    const agent = await twoAccounts();
    const fetch = (url, init) => agent.fetch(url, init);
    assert.equal(await who(fetch), ALICE);
    assert.equal(await who(fetch, { account: BOB.username }), BOB.username);
    const { accessToken } = await agent.token({ provider: PROVIDER, account: BOB.username });
    assert.equal(claims(accessToken).sub, BOB.username);
    const headers = await agent.sign({ method: 'GET', url: me, account: BOB.username });
    assert.equal(headers.Authorization, `Bearer ${accessToken}`);
    const refreshed = await agent.refresh({
      provider: PROVIDER, failedAuthorization: headers.Authorization, account: BOB.username,
    });
    assert.equal(refreshed.refreshed, true);
    assert.equal(await who(fetch, { account: BOB.username }), BOB.username);
    assert.equal(await issuer.count('token.refresh_token'), 1);
  });

  test('login takes a flow; an account is named by its user\'s name, whatever its case', async () => {
    const agent = await start();
    await agent.login({ provider: PROVIDER, flow: 'password', credentials: BOB });
    const status = await providerStatus(agent);
    assert.deepEqual([status.flow, status.flows], ['password', ['password']]);
    assert.equal(await who((url, init) => agent.fetch(url, init), { account: BOB.username.toUpperCase() }), BOB.username);
    assert.deepEqual(await agent.selectAccount({ provider: PROVIDER, account: 'Bob' }), { provider: PROVIDER, account: BOB.username });
  });

  test('selectAccount is this connection\'s choice until cleared', async () => {
    const agent = await twoAccounts();
    const fetch = (url, init) => agent.fetch(url, init);
    assert.deepEqual(await agent.selectAccount({ provider: PROVIDER, account: BOB.username }),
      { provider: PROVIDER, account: BOB.username });
    assert.equal(await who(fetch), BOB.username);
    assert.equal(await who(fetch, { account: ALICE }), ALICE);
    const status = await providerStatus(agent);
    assert.deepEqual([status.account, status.user.preferred_username], [BOB.username, BOB.username]);
    assert.deepEqual(await agent.selectAccount({ provider: PROVIDER }), { provider: PROVIDER, account: null });
    assert.equal(await who(fetch), ALICE);
  });

  test('setDefaultAccount changes the default', async () => {
    const agent = await twoAccounts();
    assert.deepEqual(await agent.setDefaultAccount({ provider: PROVIDER, account: BOB.username }),
      { provider: PROVIDER, account: BOB.username });
    assert.equal(await who((url, init) => agent.fetch(url, init)), BOB.username);
    const defaults = Object.fromEntries((await providerStatus(agent)).accounts.map((a) => [a.id, a.default]));
    assert.deepEqual(defaults, { [ALICE]: false, [BOB.username]: true });
  });

  test('an account that is not logged in rejects with NotLoggedInError', async () => {
    const agent = await twoAccounts();
    for (const call of [
      () => agent.selectAccount({ provider: PROVIDER, account: 'carol' }),
      () => agent.setDefaultAccount({ provider: PROVIDER, account: 'carol' }),
      () => agent.token({ provider: PROVIDER, account: 'carol' }),
    ]) {
      await assert.rejects(call(), (error) => error instanceof NotLoggedInError && error.code === 1001);
    }
  });

  test('logout of one account, then of all; events name the account', async () => {
    const agent = await twoAccounts();
    await agent.subscribe();
    const loggedOut = next(agent, 'userLoggedOut');
    await agent.logout({ provider: PROVIDER, account: BOB.username });
    assert.deepEqual(await loggedOut, { provider: PROVIDER, account: BOB.username, reason: 'logout' });
    assert.deepEqual((await providerStatus(agent)).accounts.map((a) => a.id), [ALICE]);
    const loggedIn = next(agent, 'userLoggedIn');
    await agent.login({ provider: PROVIDER, credentials: BOB });
    assert.equal((await loggedIn).account, BOB.username);
    const accounts = [];
    const record = ({ account }) => accounts.push(account);
    agent.on('userLoggedOut', record);
    await agent.logout({ provider: PROVIDER, all: true });
    await new Promise((resolve) => { setTimeout(resolve, 200); });
    agent.off('userLoggedOut', record);
    assert.deepEqual(accounts.sort(), [ALICE, BOB.username]);
    const status = await providerStatus(agent);
    assert.deepEqual([status.state, status.accounts, status.account], ['loggedOut', [], undefined]);
  });

  test('tokenRefreshed names the account', async () => {
    const agent = await twoAccounts();
    await agent.subscribe({ events: ['tokenRefreshed'] });
    const refreshed = next(agent, 'tokenRefreshed');
    await agent.refresh({ provider: PROVIDER, account: BOB.username });
    assert.equal((await refreshed).account, BOB.username);
  });

  test('a narrower scope is its own token, from the refresh grant, cached', async () => {
    const agent = await twoAccounts();
    const plain = (await agent.token({ provider: PROVIDER })).accessToken;
    const narrow = (await agent.token({ provider: PROVIDER, scopes: ['read'] })).accessToken;
    assert.notEqual(plain, narrow);
    assert.deepEqual([claims(plain).scope, claims(narrow).scope], ['read write', 'read']);
    assert.equal((await agent.token({ provider: PROVIDER, scopes: ['read'] })).accessToken, narrow);
    assert.equal(await issuer.count('token.refresh_token'), 1);
    const headers = await agent.sign({ method: 'GET', url: me, scopes: ['read'] });
    assert.equal(headers.Authorization, `Bearer ${narrow}`);
    const bobs = (await agent.token({ provider: PROVIDER, account: BOB.username, scopes: ['read'] })).accessToken;
    assert.deepEqual([claims(bobs).sub, claims(bobs).scope], [BOB.username, 'read']);
  });

  test('a scope the server refuses is ScopeNotGrantedError (1013), and the login stays', async () => {
    const agent = await twoAccounts();
    for (const call of [
      () => agent.token({ provider: PROVIDER, scopes: ['admin'] }),
      () => agent.sign({ method: 'GET', url: me, scopes: ['admin'] }),
      () => agent.fetch(me, { scopes: ['admin'] }),
    ]) {
      await assert.rejects(call(), (error) => error instanceof ScopeNotGrantedError
        && error.code === 1013 && error.reason === 'scopeNotGranted' && error.retryable === false);
    }
    assert.equal((await providerStatus(agent)).state, 'loggedIn');
    assert.equal(await who((url, init) => agent.fetch(url, init)), ALICE);
  });

  test('two resources and an audience get three tokens', async () => {
    const agent = await twoAccounts();
    const own = `${issuer.url}/api`;
    const described = [];
    for (const shape of [{ resource: own }, { resource: FILES }, { audience: 'files', account: BOB.username }, {}]) {
      const { sub, resource, audience } = await (await agent.fetch(tokenUrl, shape)).json();
      described.push([sub, resource, audience]);
    }
    assert.deepEqual(described, [
      [ALICE, own, undefined], [ALICE, FILES, undefined], [BOB.username, undefined, 'files'], [ALICE, undefined, undefined],
    ]);
    const tokens = new Set();
    for (const shape of [{ resource: own }, { resource: FILES }, {}]) {
      tokens.add((await agent.token({ provider: PROVIDER, ...shape })).accessToken);
    }
    assert.equal(tokens.size, 3);
  });

  test('an unknown resource or audience is ScopeNotGrantedError with the server\'s words', async () => {
    const agent = await twoAccounts();
    await assert.rejects(agent.token({ provider: PROVIDER, resource: UNKNOWN_RESOURCE }),
      (error) => error instanceof ScopeNotGrantedError && /unknown resource/.test(error.message));
    await assert.rejects(agent.sign({ method: 'GET', url: me, audience: 'nobody' }),
      (error) => error instanceof ScopeNotGrantedError && /unknown audience/.test(error.message));
    assert.equal(await who((url, init) => agent.fetch(url, init)), ALICE);
  });

  test('fetcher() pins an account and a shape for every request, the resend after a 401 too', async () => {
    const agent = await twoAccounts();
    const asBob = agent.fetcher({ account: BOB.username, resource: FILES });
    await issuer.fault({ rejectApi: 1 });
    const response = await asBob(tokenUrl);
    assert.deepEqual([response.status, response.authAgent.retried], [200, true]);
    const described = await response.json();
    assert.deepEqual([described.sub, described.resource], [BOB.username, FILES]);
    // Bob's shaped token, then its refresh after the 401; nothing for alice.
    assert.deepEqual([await issuer.grants('refresh_token:bob'), await issuer.grants('refresh_token:alice')], [2, 0]);
    assert.equal(await who(asBob, { account: ALICE }), ALICE); // a call's own init wins
    const refused = agent.fetcher({ scopes: ['admin'] });
    await assert.rejects(refused(me), ScopeNotGrantedError);
  });
});

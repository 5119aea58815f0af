/**
 * The VS Code sample (issue 34 item 4) against a stub of the `vscode` module
 * (test/vscode-stub.cjs: the calls the sample makes, the events it fires) and
 * the real agent with a dev issuer that approves at once: VS Code itself
 * cannot run on these machines. The extension is laid out as VS Code loads it
 * — its files beside node_modules/auth-agent-client (a link to this client, as
 * `npm install` makes it) and node_modules/vscode (the stub, where the
 * extension host injects the real one).
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import {
  AGENT_BIN, CLIENT_ROOT, DevIssuer, SKIP, approveDevice, browse, redirectOf,
} from '../../../testing/support.js';

const SAMPLE = fileURLToPath(new URL('..', import.meta.url));
const STUB = fileURLToPath(new URL('vscode-stub.cjs', import.meta.url));
const require = createRequire(import.meta.url);
const vscode = require(STUB);

/** The calls of one name since `from` (an index into vscode.calls). */
const callsOf = (name, from = 0) => vscode.calls.slice(from).filter(([called]) => called === name).map(([, ...args]) => args);
/** Resolves with the next onDidChangeSessions event. */
const nextChange = (provider) => new Promise((resolve) => {
  const subscription = provider.onDidChangeSessions((event) => {
    subscription.dispose();
    resolve(event);
  });
});

describe('the VS Code sample, against a stub of vscode and the real agent', { skip: SKIP, timeout: 120_000 }, () => {
  let issuer;
  let directory;
  let extension;
  let context;
  let provider;

  before(async () => {
    delete process.env.AUTH_AGENT_SOCK; // the agent of this test, not a socket agent of the machine
    issuer = await DevIssuer.start();
    await issuer.fault({ autoApprove: 'alice', deviceInterval: 1 });
    directory = mkdtempSync(join(tmpdir(), 'auth-agent-vscode-'));
    const config = issuer.writeInteractiveConfig(directory);
    const installed = join(directory, 'extension');
    mkdirSync(join(installed, 'node_modules', 'vscode'), { recursive: true });
    for (const file of ['package.json', 'extension.js', 'sessions.js', 'present.js']) {
      copyFileSync(join(SAMPLE, file), join(installed, file));
    }
    symlinkSync(CLIENT_ROOT, join(installed, 'node_modules', 'auth-agent-client'), 'dir');
    writeFileSync(join(installed, 'node_modules', 'vscode', 'index.js'), `module.exports = require(${JSON.stringify(STUB)});\n`);
    Object.assign(vscode.settings, { 'authAgent.path': AGENT_BIN, 'authAgent.args': ['--config', config], 'authAgent.provider': 'web' });
    extension = require(join(installed, 'extension.js'));
    context = { subscriptions: [] };
  });

  after(async () => {
    await extension?.deactivate();
    for (const subscription of context?.subscriptions ?? []) subscription.dispose();
    await issuer?.close();
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  test('activate registers the authentication provider "auth-agent", several accounts allowed', async () => {
    await extension.activate(context);
    const [[id, label, registered, options]] = callsOf('registerAuthenticationProvider');
    assert.deepEqual([id, label, options], ['auth-agent', 'auth-agent', { supportsMultipleAccounts: true }]);
    provider = registered;
    assert.deepEqual(await provider.getSessions(), []);
  });

  test('createSession: the redirect port forwarded, the URL opened, the login done, the session added', async () => {
    const from = vscode.calls.length;
    vscode.behaviour.openExternal = (url) => {
      browse(url);
      return true;
    };
    const changed = nextChange(provider);
    const session = await provider.createSession([]);
    assert.match(session.id, /^web\//);
    assert.equal(session.account.label, 'alice (Web)');
    const [[forwarded]] = callsOf('asExternalUri', from);
    assert.match(forwarded, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const [[opened]] = callsOf('openExternal', from);
    assert.ok(opened.startsWith(`${issuer.url}/authorize?`), opened);
    assert.deepEqual(callsOf('showInputBox', from), []);
    const event = await changed;
    assert.deepEqual([event.added.map((s) => s.id), event.removed, event.changed], [[session.id], [], []]);
  });

  test('getSessions: the account, with a token the API accepts', async () => {
    const [session] = await provider.getSessions();
    assert.equal(session.account.label, 'alice (Web)');
    const me = await fetch(`${issuer.url}/api/me`, { headers: { Authorization: `Bearer ${session.accessToken}` } });
    assert.equal(me.status, 200);
  });

  test('a redirect VS Code cannot forward as is: the address the person pastes completes the login', async () => {
    const from = vscode.calls.length;
    vscode.behaviour.asExternalUri = () => 'https://example-tunnel.test/callback';
    vscode.behaviour.openExternal = () => true; // a browser elsewhere: its redirect does not reach the agent
    vscode.behaviour.showInputBox = async () => redirectOf(callsOf('openExternal', from)[0][0]);
    const session = await provider.createSession([]);
    assert.equal(session.account.label, 'alice (Web)');
    assert.equal(callsOf('showInputBox', from).length, 1);
    delete vscode.behaviour.asExternalUri;
    delete vscode.behaviour.showInputBox;
  });

  test('declining to open the website cancels the login', async () => {
    vscode.behaviour.openExternal = () => false;
    await assert.rejects(provider.createSession([]), (error) => error.reason === 'requestCancelled');
  });

  test('a device code is copied, shown, and its page opened', async () => {
    const from = vscode.calls.length;
    vscode.settings['authAgent.provider'] = 'device';
    vscode.behaviour.openExternal = (url) => {
      const page = new URL(url);
      approveDevice(`${page.origin}${page.pathname}`, page.searchParams.get('user_code'));
      return true;
    };
    const session = await provider.createSession([]);
    assert.match(session.id, /^device\//);
    const [[code]] = callsOf('clipboard.writeText', from);
    assert.match(code, /\S/);
    assert.ok(callsOf('showInformationMessage', from).some(([message]) => message.includes(code)));
    assert.ok(callsOf('openExternal', from)[0][0].includes(`user_code=${code}`));
    assert.equal((await provider.getSessions()).length, 2);
  });

  test('removeSession logs the account out; onDidChangeSessions removes it', async () => {
    const [session] = await provider.getSessions();
    const changed = nextChange(provider);
    await provider.removeSession(session.id);
    const event = await changed;
    assert.deepEqual(event.removed.map((s) => s.id), [session.id]);
    assert.deepEqual((await provider.getSessions()).map((s) => s.id).includes(session.id), false);
  });

  test('deactivate closes the agent; the registration is disposed with the context', async () => {
    await extension.deactivate();
    for (const subscription of context.subscriptions.splice(0)) subscription.dispose();
    assert.deepEqual(callsOf('unregisterAuthenticationProvider'), [['auth-agent']]);
  });
});

/**
 * What the tests share: the agent binary, a dev issuer on loopback, a config
 * for it, and a fake agent for behaviour the real one cannot be made to show.
 * Kept outside test/ because `node --test` runs every .js file under a
 * directory named test.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { findAgent } from '../index.js';

export const AGENT_BIN = findAgent();
export const SKIP = AGENT_BIN ? false : 'auth-agent binary not found: set AUTH_AGENT_BIN or put auth-agent on PATH';
export const CLIENT_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SCHEMA_PATH = join(CLIENT_ROOT, '..', '..', 'schema', 'openrpc.json');
export const FAKE_AGENT = fileURLToPath(new URL('fake-agent.js', import.meta.url));
export const ECHO_AGENT = fileURLToPath(new URL('echo-agent.js', import.meta.url));
export const ASKING_AGENT = fileURLToPath(new URL('asking-agent.js', import.meta.url));
export const PROVIDER = 'corp';
export const CREDENTIALS = Object.freeze({ username: 'alice', password: 'wonderland' });
/** The dev issuer's second user, for a second account on the same provider. */
export const BOB = Object.freeze({ username: 'bob', password: 'builder' });
export const WAIT = 5_000;

/** `auth-agent dev-issuer` on a free loopback port; it serves until its stdin closes. */
export class DevIssuer {
  static async start() {
    const child = spawn(AGENT_BIN, ['dev-issuer', '--port', '0'], { stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdout.setEncoding('utf8');
    const [firstChunk] = await once(child.stdout, 'data', { signal: AbortSignal.timeout(10_000) });
    return new DevIssuer(child, JSON.parse(firstChunk.split('\n')[0]).issuer);
  }

  constructor(child, url) {
    this.child = child;
    this.url = url;
    this.apiUrl = `${url}/api/items`;
  }

  async admin(path, body) {
    const response = await fetch(`${this.url}/_admin/${path}`, {
      method: body ? 'POST' : 'GET',
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(5_000),
    });
    if (!response.ok) throw new Error(`dev issuer ${path}: HTTP ${response.status}`);
    return response.json();
  }

  /** Inject faults: latencyMs, fail, status, drop, revokeAll, accessTokenLifetime. */
  fault(settings) {
    return this.admin('fault', settings);
  }

  reset() {
    return this.admin('reset', {});
  }

  async count(key) {
    return (await this.admin('stats')).counts[key] ?? 0;
  }

  /** Tokens issued under `key`: `GRANT:USER` or `GRANT:USER:SHAPE`, e.g. `refresh_token:bob:scope=read`. */
  async grants(key) {
    return (await this.admin('grants')).grants[key] ?? 0;
  }

  /**
   * A config with one password-grant provider, `corp`, for this issuer,
   * granted the scopes `read` and `write` (so a token for `read` alone is a narrower one).
   */
  writeConfig(directory, refreshWindowSeconds = 60) {
    const path = join(directory, 'config.json');
    writeFileSync(path, JSON.stringify({
      refreshWindowSeconds,
      store: { kind: 'memory' },
      providers: [{
        id: PROVIDER,
        displayName: 'Corp',
        flow: 'password',
        origins: [this.url],
        tokenEndpoint: `${this.url}/token`,
        revocationEndpoint: `${this.url}/revoke`,
        userinfoEndpoint: `${this.url}/userinfo`,
        clientId: 'cli',
        scopes: ['read', 'write'],
      }],
    }));
    return path;
  }

  /**
   * A config with two interactive providers of this issuer: `web`, a browser
   * login, and `device`, a device-code login (its origin is the issuer by
   * another name, since an origin belongs to one provider).
   */
  writeInteractiveConfig(directory) {
    const path = join(directory, 'config.json');
    const common = { issuer: this.url, clientId: 'cli' };
    writeFileSync(path, JSON.stringify({
      store: { kind: 'memory' },
      providers: [
        { id: 'web', displayName: 'Web', flow: 'authorizationCode', origins: [this.url], ...common },
        { id: 'device', displayName: 'Device', flow: 'deviceCode', origins: [this.url.replace('127.0.0.1', 'localhost')], ...common },
      ],
    }));
    return path;
  }

  async close() {
    const exited = once(this.child, 'exit');
    this.child.stdin.end();
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  }
}

/** The payload of one of the dev issuer's JWT access tokens. */
export const claims = (accessToken) => JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString('utf8'));

/** The fake opener: a browser that follows the issuer's redirect back to the agent's loopback listener. */
export const browse = (url) => {
  fetch(url).then((response) => response.text()).catch(() => {});
};

/** Where the issuer sends the browser: the loopback redirect a person would paste, taken without following it. */
export async function redirectOf(url) {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (!location) throw new Error(`the issuer answered ${response.status}, no redirect`);
  return location;
}

/** The person at the device page: approves `userCode` as alice. */
export const approveDevice = (verificationUri, userCode) => {
  const body = new URLSearchParams({ user_code: userCode, username: 'alice', password: 'wonderland', action: 'approve' });
  fetch(verificationUri, { method: 'POST', body }).then((response) => response.text()).catch(() => {});
};

/** Resolves after `ms` milliseconds. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

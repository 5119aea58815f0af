import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createConnection } from 'node:net';
import { Readable } from 'node:stream';

import { AgentDiedError, AuthAgentError } from './errors.js';
import { CLIENT_GRACE_MS, agentSeconds, fetchRequest, toResponse } from './http.js';
import { findAgent } from './locate.js';
import { CLIENT_REASONS, NOTIFICATIONS, PRESENT_LOGIN, PROTOCOL_VERSION } from './protocol.js';
import { VERSION } from './version.js';

const STDERR_TAIL_LINES = 50;
const timeoutError = (method, ms) => new AuthAgentError(
  `${method} got no answer within ${ms} ms; it was cancelled`,
  { code: -32800, reason: CLIENT_REASONS.timeout, retryable: true },
);
const KNOWN_NOTIFICATIONS = new Set(NOTIFICATIONS);
const PRESENT_LOGIN_ANSWERS = ['opened', 'redirectUrl', 'cancelled'];
/** Node 18 lacks Symbol.asyncDispose; the registered symbol is what TypeScript's `await using` falls back to. */
const ASYNC_DISPOSE = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');
/** The constructor's option that hands it a socket agent's connection instead of spawning (connect()). */
const CONNECTION = Symbol('connection');

/**
 * A socket agent's connection (`auth-agent serve --socket`) in the shape of the
 * child process the client otherwise drives: stdin and stdout are the socket,
 * there is no stderr, and "the process ends" when the connection does
 * (`shutdown` and `exit` end the connection only, never the agent).
 */
class SocketChild extends EventEmitter {
  constructor(socket) {
    super();
    let connected = false;
    this.socket = socket;
    this.stdin = socket;
    this.stdout = socket;
    this.stderr = Readable.from([]);
    this.pid = undefined;
    socket.once('connect', () => {
      connected = true;
      this.emit('spawn');
    });
    socket.on('error', (error) => {
      if (!connected) this.emit('error', error);
    });
    socket.once('close', () => this.emit('close', 0, null));
  }

  kill() {
    this.socket.destroy();
  }
}

/**
 * A running auth-agent process and the JSON-RPC session with it.
 *
 * Notifications the client knows (NOTIFICATIONS) are emitted as events of the
 * same name with their params; every notification, known or not, is also
 * emitted as `notification` with `{method, params}`. Unknown names are never
 * emitted on their own, so an agent newer than this client cannot trigger
 * EventEmitter's special `error` event.
 *
 * Every call takes `{signal, timeout}`. Aborting `signal` sends
 * `$/cancelRequest` and rejects at once with `signal.reason` (an `AbortError`
 * DOMException unless you abort with your own reason); the agent's -32800
 * answer that follows is discarded. Running out of `timeout` (ms) cancels the
 * same way and rejects with AuthAgentError reason `timeout`, code -32800.
 */
export class AuthAgent extends EventEmitter {
  #child;
  #spawned;
  #nextId = 1;
  #pending = new Map();
  #closing = false;
  #endError = null;
  #stdoutBuffer = '';
  #stderrTail = [];
  #stderrPartial = '';
  /** Ends each open notifications() iterator; run when the agent ends. */
  #iteratorEnders = new Set();
  /** The onPresentLogin handler; null: presentLogin is answered -32601. */
  #presentLogin = null;
  /** The one initialize sent (the agent refuses a second): its answer, for every initialize() call. */
  #initialized = null;

  /**
   * Spawn the agent and wait until it runs; rejects with AuthAgentError
   * reason `agentNotFound` when it cannot be started.
   */
  static async start(options) {
    const agent = new AuthAgent(options);
    await agent.#spawned;
    return agent;
  }

  /**
   * The socket agent $AUTH_AGENT_SOCK (or `socketPath`) names — one agent, one
   * memory and one login for every tool of the session — when it answers a
   * ping within `connectTimeout` ms (default 1000); otherwise (with a warning
   * when one was named) an agent started as `AuthAgent.start(options)` would.
   * `close()` ends this connection only. The socket's directory is the
   * agent's, 0700: no other user can have put it there.
   */
  static async connect({ socketPath, connectTimeout = 1_000, ...options } = {}) {
    const path = socketPath ?? process.env.AUTH_AGENT_SOCK;
    if (path) {
      const child = new SocketChild(createConnection(path));
      const agent = new AuthAgent({ ...options, [CONNECTION]: child });
      try {
        await agent.#spawned;
        await agent.ping({ timeout: connectTimeout });
        return agent;
      } catch (error) {
        agent.#closing = true;
        child.kill();
        process.emitWarning(`not using the agent at ${path} (${error.message}); starting one`);
      }
    }
    return AuthAgent.start(options);
  }

  /**
   * Spawn the agent. Prefer `AuthAgent.start()`, which also reports a binary
   * that cannot be started.
   *
   * @param {object} [options]
   * @param {string} [options.bin] the executable; else $AUTH_AGENT_BIN; else the @auth-agent/PLATFORM package's; else auth-agent on PATH
   * @param {string} [options.config] passed as --config; else the agent reads $AUTH_AGENT_CONFIG
   * @param {string[]} [options.args] more command-line arguments
   * @param {object} [options.env] the agent's environment (default: this process's)
   * @param {'inherit'|'capture'} [options.stderr] forward the agent's stderr to ours (default),
   *   or only keep its tail
   * @param {number} [options.timeout] default per-call limit in ms (default 30000; Infinity: none)
   * @param {number} [options.shutdownGrace] ms close() waits before killing (default 3000)
   */
  constructor({
    bin, config, args = [], env, stderr = 'inherit', timeout = 30_000, shutdownGrace = 3_000, [CONNECTION]: connection,
  } = {}) {
    super();
    const executable = connection ? 'the socket agent' : findAgent(bin);
    if (!executable) {
      const message = 'auth-agent not found: pass bin, set AUTH_AGENT_BIN, install the auth-agent package, or put it on PATH';
      throw new AuthAgentError(message, { reason: CLIENT_REASONS.agentNotFound });
    }
    this.timeout = timeout;
    this.shutdownGrace = shutdownGrace;
    const argv = [...(config ? ['--config', config] : []), ...args];
    this.#child = connection ?? spawn(executable, argv, { stdio: 'pipe', env: env ?? process.env });
    this.#spawned = new Promise((resolve, reject) => {
      this.#child.once('spawn', resolve);
      this.#child.once('error', (error) => {
        reject(new AuthAgentError(`cannot start ${executable}: ${error.code ?? error.message}`, {
          reason: CLIENT_REASONS.agentNotFound,
        }));
      });
    });
    this.#spawned.catch((error) => this.#end(error));
    this.exited = new Promise((resolve) => {
      this.#child.once('close', (exitCode, signal) => {
        this.#end(new AgentDiedError(exitCode, signal, this.stderrTail));
        resolve({ exitCode, signal });
      });
    });
    this.#child.stdin.on('error', () => {
      // A write to a dead agent; 'close' fails the pending calls.
    });
    this.#child.stdout.setEncoding('utf8').on('data', (chunk) => this.#readStdout(chunk));
    const forwardStderr = stderr === 'inherit';
    this.#child.stderr.setEncoding('utf8').on('data', (chunk) => this.#readStderr(chunk, forwardStderr));
  }

  /** The agent's process id. */
  get pid() {
    return this.#child.pid;
  }

  /** The agent's last stderr lines. */
  get stderrTail() {
    return [...this.#stderrTail, this.#stderrPartial].filter(Boolean).join('\n');
  }

  /** Send a request and resolve with its raw result. */
  request(method, params, { signal, timeout = this.timeout } = {}) {
    if (this.#endError) return Promise.reject(this.#endError);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const settle = (outcome) => {
        this.#pending.delete(id);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const abandon = (error) => {
        settle(() => reject(error));
        this.notify('$/cancelRequest', { id });
      };
      const onAbort = () => abandon(signal.reason);
      const timer = Number.isFinite(timeout)
        ? setTimeout(() => abandon(timeoutError(method, timeout)), timeout)
        : undefined;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, {
        resolve: (result) => settle(() => resolve(result)),
        reject: (error) => settle(() => reject(error)),
      });
      this.#write({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Send a notification (no answer). */
  notify(method, params) {
    if (this.#endError) return;
    this.#write({ jsonrpc: '2.0', method, params });
  }

  /**
   * Optional handshake: the protocol version and the agent's capabilities.
   * Sent once: a later call (or one after onPresentLogin, which sends it)
   * resolves with the same answer.
   */
  initialize({ clientInfo = { name: 'auth-agent-node', version: VERSION } } = {}, options) {
    if (!this.#initialized) {
      const capabilities = this.#presentLogin ? { presentLogin: PRESENT_LOGIN } : undefined;
      this.#initialized = this.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientInfo, capabilities }, options);
      // Nobody need await it when onPresentLogin sent it: not an unhandled rejection.
      this.#initialized.catch(() => {});
    }
    return this.#initialized;
  }

  /**
   * Present this connection's interactive logins yourself: `handler(params)`
   * gets the agent's `presentLogin` request — `{requestId, provider,
   * displayName, kind: 'browser' | 'deviceCode', url?, userCode?,
   * verificationUri?, verificationUriComplete?, expiresAt, resource?,
   * authorizationServer?, redirectUri?}` — and returns (or resolves with)
   * `{opened: true}` (it opened the URL or showed the code), `{redirectUrl}`
   * (the redirect its person pasted or it captured) or `{cancelled: true}`
   * (the person declined: the login ends with -32800). Throwing, or no answer
   * within 10 s, makes the agent fall back to `loginPrompt` and its own
   * opener. The capability is declared in `initialize`, which this sends
   * unless it was sent already — so call it first; calling it again replaces
   * the handler. Returns this.
   */
  onPresentLogin(handler) {
    if (typeof handler !== 'function') throw new TypeError('onPresentLogin takes a function');
    if (this.#initialized && !this.#presentLogin) {
      throw new Error('onPresentLogin must come before initialize(): the capability is declared there, once');
    }
    this.#presentLogin = handler;
    this.initialize();
    return this;
  }

  /** Resolves with `{}` once the agent answers. */
  ping(options) {
    return this.request('ping', undefined, options);
  }

  /** Every provider: its state and the fields a login asks for. */
  status(options) {
    return this.request('status', undefined, options);
  }

  /**
   * Log in: `{provider, flow?, credentials?: {username, password} | {token}, openBrowser?}`;
   * `flow` picks one of the provider's `flows` (status), default its first.
   * Device-code and browser logins wait for the user; listen for `loginPrompt`.
   *
   * Or `{resource, name?, flow?, openBrowser?}` instead of `provider`: the URL of an API
   * with no configuration, which the agent learns (as provider id `name` when given;
   * discovery, registration) before
   * a browser login (`flow: 'deviceCode'`: a device login where offered); the
   * result's `provider` is the learned provider's id.
   */
  login({ provider, resource, name, flow, credentials, openBrowser }, options) {
    if ((provider === undefined) === (resource === undefined)) {
      throw new TypeError('login takes a provider or a resource, exactly one of them');
    }
    return this.request('login', { provider, resource, name, flow, credentials, openBrowser }, options);
  }

  /** Remove a learned provider: log out of its accounts, revoke, delete its registration → `{forgotten, revoked}`. */
  forget({ provider }, options) {
    return this.request('forget', { provider }, options);
  }

  /**
   * Log out, revoking at the server when configured: `{provider, account?, all?}` → `{revoked}`.
   * Without `account`, the account this connection would use; `all: true`, every account.
   */
  logout({ provider, account, all }, options) {
    return this.request('logout', { provider, account, all }, options);
  }

  /**
   * Use `account` for this connection's requests to `provider` that name
   * none; `null` goes back to the provider's default. Only this agent
   * connection is affected, never another program's: `{provider, account}`.
   */
  selectAccount({ provider, account = null }, options) {
    return this.request('selectAccount', { provider, account }, options);
  }

  /** Make `account` the provider's default for every connection, agent and the command line (kept in the store). */
  setDefaultAccount({ provider, account }, options) {
    return this.request('setDefaultAccount', { provider, account }, options);
  }

  /**
   * Finish a waiting browser login with the whole redirect URL its browser
   * ended at (`http://127.0.0.1:PORT/callback?…`), pasted back because that
   * browser could not reach the agent. Any connection of the agent may send it;
   * `requestId` is the login's (a `loginPrompt`'s `requestId`). A wrong `state`,
   * a used URL or an unknown request rejects (-32602) and the login keeps waiting.
   */
  completeLogin({ requestId, redirectUrl }, options) {
    return this.request('completeLogin', { requestId, redirectUrl }, options);
  }

  /**
   * The headers to add to an HTTP request (`{}` when no provider covers its
   * origin), refreshing the token first when it is due. The provider that
   * signed, which `refresh` needs after a 401, is the headers' `provider`:
   * not enumerable, so spreading the headers into a request leaves it out.
   * `account` signs as that account (default: the one this connection
   * selected, else the provider's default); `scopes`, `audience` and
   * `resource` ask for a token shaped for the API (ScopeNotGrantedError
   * when the server refuses it).
   */
  async sign({ method, url, headers, provider, account, scopes, audience, resource }, options) {
    const params = { request: { method, url, headers }, provider, account, scopes, audience, resource };
    const result = await this.request('sign', params, options);
    return Object.defineProperty(result.headers, 'provider', { value: result.provider ?? null });
  }

  /**
   * The global `fetch`, signed by the agent: same arguments (a URL, string or
   * Request, and RequestInit), resolving with a standard Response. The agent
   * signs with the `sign` rules (unsigned when no provider covers the URL),
   * sends the request, and after a 401 for the token it sent refreshes once
   * and resends once; `response.authAgent` is `{provider, signed, retried}`.
   *
   * When no provider covers the URL and it answers 401 with a Bearer challenge,
   * `response.authAgent.login` is `{resource, authorizationServer, scopes}`
   * (else null): pass its `resource` to `login({resource})`; with
   * `init.login: 'ifNeeded'` the agent runs that login itself and resends.
   *
   * Besides RequestInit, `init` takes `provider` (sign with this one),
   * `account`, `scopes`, `audience`, `resource` (as in `sign`), `login`, `openBrowser` (as login's),
   * `timeout` (ms for the whole call; default the client's, Infinity: the
   * agent's maximum of 600 s) and `maxResponseBytes` (default 10 MiB).
   * Aborting `init.signal` rejects with its reason and cancels the request at
   * the agent. Failures reject with AuthAgentError subclasses:
   * RequestFailedError (network, timeout; retryable), ResponseTooLargeError,
   * NotLoggedInError, SessionExpiredError, ...
   */
  async fetch(input, init = {}) {
    const {
      provider, account, scopes, audience, resource, login, openBrowser, timeout = this.timeout, maxResponseBytes, ...requestInit
    } = init;
    const request = new Request(input, requestInit);
    const bytes = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
    const params = {
      request: fetchRequest(request, bytes),
      provider,
      account,
      scopes,
      audience,
      resource,
      timeoutSeconds: agentSeconds(timeout),
      maxResponseBytes,
      login,
      openBrowser,
    };
    const result = await this.request('fetch', params, { signal: request.signal, timeout: timeout + CLIENT_GRACE_MS });
    return toResponse(result, request.url);
  }

  /**
   * A function with the global `fetch`'s signature that sends through
   * `agent.fetch` with these `defaults` (`provider`, `account`, `scopes`,
   * `audience`, `resource`, `timeout`, `maxResponseBytes`, or any
   * RequestInit member) under each call's own `init`: hand it to a library
   * that takes a `fetch`, and every request it makes goes out as that
   * account, with that token shape.
   */
  fetcher(defaults = {}) {
    return (input, init = {}) => this.fetch(input, { ...defaults, ...init });
  }

  /**
   * After a 401: pass the Authorization header that failed as
   * `failedAuthorization`, so a token already replaced is not refreshed twice.
   */
  refresh({ provider, failedAuthorization, account }, options) {
    return this.request('refresh', { provider, failedAuthorization, account }, options);
  }

  /**
   * The current access token, for scripts: `{accessToken, tokenType, expiresAt}`;
   * `account`, `scopes`, `audience` and `resource` as in `sign`; `minValidSeconds`
   * refreshes first unless it is valid that long (then `refreshed` says whether it was).
   */
  token({ provider, account, scopes, audience, resource, minValidSeconds }, options) {
    return this.request('token', { provider, account, scopes, audience, resource, minValidSeconds }, options);
  }

  /** Start notifications (default events: userLoggedIn, userLoggedOut). */
  subscribe({ events, providers } = {}, options) {
    return this.request('subscribe', { events, providers }, options);
  }

  /** Stop notifications. */
  unsubscribe(options) {
    return this.request('unsubscribe', undefined, options);
  }

  /**
   * Every notification as `{method, params}`, for `for await`: the iterator
   * ends when the agent ends or `signal` aborts (after yielding what had
   * arrived), and stops listening when the loop is left. Notifications that
   * arrive between two steps are queued. Call subscribe() for the login events.
   */
  notifications({ signal } = {}) {
    const queue = [];
    let wake = () => {};
    let ended = false;
    const push = (notification) => {
      queue.push(notification);
      wake();
    };
    const end = () => {
      ended = true;
      this.off('notification', push);
      this.#iteratorEnders.delete(end);
      signal?.removeEventListener('abort', end);
      wake();
    };
    this.on('notification', push);
    this.#iteratorEnders.add(end);
    signal?.addEventListener('abort', end, { once: true });
    if (this.#endError || signal?.aborted) end();
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      async next() {
        while (queue.length === 0 && !ended) await new Promise((resolve) => { wake = resolve; });
        return queue.length ? { value: queue.shift(), done: false } : { value: undefined, done: true };
      },
      async return() {
        end();
        queue.length = 0;
        return { value: undefined, done: true };
      },
    };
  }

  /**
   * Shut the agent down (shutdown, exit, end of input), kill it if it has not
   * ended within `shutdownGrace` ms, and resolve with how it ended. Calls
   * still in flight reject with reason `closed`.
   */
  async close() {
    if (!this.#closing && !this.#endError) {
      this.#closing = true;
      try {
        await this.request('shutdown', undefined, { timeout: this.shutdownGrace });
        this.notify('exit');
      } catch {
        // Not answering shutdown is what the kill below is for.
      }
    }
    this.#closing = true;
    this.#child.stdin.end();
    const killer = setTimeout(() => this.#child.kill('SIGKILL'), this.shutdownGrace);
    const ended = await this.exited;
    clearTimeout(killer);
    return ended;
  }

  /** `await using agent = await AuthAgent.start()` closes the agent at the end of the block. */
  async [ASYNC_DISPOSE]() {
    await this.close();
  }

  /** One message per line. JSON.stringify leaves out undefined members: optional params need no checks. */
  #write(message) {
    if (this.#child.stdin.writable) this.#child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  #readStdout(chunk) {
    const lines = (this.#stdoutBuffer + chunk).split('\n');
    this.#stdoutBuffer = lines.pop();
    for (const line of lines) this.#handleLine(line);
  }

  #handleLine(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return; // Not JSON: nothing to match it to.
    }
    if (!message || typeof message !== 'object') return;
    if (typeof message.method === 'string') {
      if ('id' in message) this.#answerAgent(message);
      else this.#emitNotification(message.method, message.params);
      return;
    }
    const call = this.#pending.get(message.id);
    if (!call) return;
    if (message.error) call.reject(AuthAgentError.fromResponse(message.error));
    else call.resolve(message.result);
  }

  /**
   * A listener that throws still surfaces as an uncaught exception, as with
   * any emitter, but later: the lines after this one must still be read.
   */
  #emitNotification(method, params) {
    try {
      if (KNOWN_NOTIFICATIONS.has(method)) this.emit(method, params);
      this.emit('notification', { method, params });
    } catch (error) {
      process.nextTick(() => {
        throw error;
      });
    }
  }

  /**
   * Every agent→host request gets one answer: -32601 for those this client
   * has no handler for, else the handler's, whenever it settles (the person
   * may take a while; answers keep being read meanwhile).
   */
  async #answerAgent({ id, method, params }) {
    const handler = method === 'presentLogin' ? this.#presentLogin : null;
    if (!handler) {
      this.#write({ jsonrpc: '2.0', id, error: { code: -32601, message: `this host does not handle ${method}` } });
      return;
    }
    try {
      const answer = await handler(params);
      if (!PRESENT_LOGIN_ANSWERS.some((key) => answer && key in answer)) {
        throw new TypeError('the presentLogin handler answered no opened, redirectUrl or cancelled');
      }
      this.#write({ jsonrpc: '2.0', id, result: answer });
    } catch (error) {
      const message = `presenting the login failed: ${error?.message ?? error}`;
      this.#write({ jsonrpc: '2.0', id, error: { code: -32603, message } });
    }
  }

  #readStderr(chunk, forward) {
    if (forward) process.stderr.write(chunk);
    const lines = (this.#stderrPartial + chunk).split('\n');
    this.#stderrPartial = lines.pop();
    this.#stderrTail.push(...lines);
    this.#stderrTail.splice(0, this.#stderrTail.length - STDERR_TAIL_LINES);
  }

  /** The agent is gone: fail every pending call, and every later one. */
  #end(diedError) {
    if (this.#endError) return;
    this.#endError = this.#closing
      ? new AuthAgentError('the auth-agent client was closed', { reason: CLIENT_REASONS.closed })
      : diedError;
    for (const call of [...this.#pending.values()]) call.reject(this.#endError);
    for (const end of [...this.#iteratorEnders]) end();
  }
}

/// <reference types="node" />
/**
 * Node client for auth-agent: a process that keeps the user's logins and
 * tokens and signs HTTP requests, spoken to with JSON-RPC over stdin/stdout.
 */
import { EventEmitter } from 'node:events';

export declare const PROTOCOL_VERSION: '1';
/** Requests the host sends; each is answered. */
export declare const METHODS: readonly string[];
/** Notifications the host sends; never answered. */
export declare const HOST_NOTIFICATIONS: readonly string[];
/** Requests the agent sends the host; presentLogin is answered by the onPresentLogin handler, the others -32601. */
export declare const AGENT_REQUESTS: readonly string[];
/** Notifications the agent sends to a subscribed host. */
export declare const NOTIFICATIONS: readonly NotificationName[];
/** What each error code means when the agent's `data` does not say. */
export declare const ERRORS: Readonly<Record<number, { readonly reason: string; readonly retryable: boolean }>>;
/** Reasons for failures the client detects itself. */
export declare const CLIENT_REASONS: Readonly<{
  timeout: 'timeout';
  agentDied: 'agentDied';
  agentNotFound: 'agentNotFound';
  closed: 'closed';
}>;

/** The agent executable: `bin`, else $AUTH_AGENT_BIN, else the one the @auth-agent/PLATFORM package carries, else auth-agent on PATH; null if none. */
export declare function findAgent(bin?: string): string | null;

/** RFC 3339 UTC time, or null when unknown or never. */
export type Expiry = string | null;
/** Who is logged in, as the provider describes them. */
export type User = Record<string, unknown>;
export type EventName = 'userLoggedIn' | 'userLoggedOut' | 'tokenRefreshed' | 'providersChanged';
export type NotificationName = EventName | 'loginPrompt' | 'loginWaiting';
export type Flow = 'session' | 'password' | 'clientCredentials' | 'token' | 'deviceCode' | 'authorizationCode' | 'tokenExchange' | 'idJag';

/** The account events name the account they concern. */
export interface UserLoggedIn { provider: string; account: string; user: User; expiresAt: Expiry }
export interface UserLoggedOut { provider: string; account: string; reason: 'logout' | 'expired' | 'external' | 'subjectLoggedOut' }
export interface TokenRefreshed { provider: string; account: string; expiresAt: Expiry }
/** The provider ids learned or forgotten (by any agent on the store); call status() for what they show. */
/** Learned provider ids that appeared, went away, or whose resource moved to another authorization server (`changed`). */
export interface ProvidersChanged { added: string[]; removed: string[]; changed: string[] }
/**
 * A device-code or browser login waits for the user: show `userCode` and
 * `verificationUri` (device code) or open `url` (browser). `requestId` is the login's id.
 */
export interface LoginPrompt {
  provider: string;
  requestId: string | number | null;
  userCode?: string;
  verificationUri?: string;
  verificationUriComplete?: string;
  url?: string;
  expiresAt: string;
}
/**
 * The agent's `presentLogin` request to a host that declared it (onPresentLogin):
 * a login this connection started needs the person. `requestId` is the id of
 * the host's own login or fetch request.
 */
export interface PresentLogin {
  requestId: string | number | null;
  provider: string;
  displayName: string;
  kind: 'browser' | 'deviceCode';
  /** browser: the authorization URL to open. */
  url?: string;
  /** deviceCode: the code to show, and where to enter it. */
  userCode?: string;
  verificationUri?: string;
  verificationUriComplete?: string;
  expiresAt: string;
  /** A learned API's URL and its authorization server. */
  resource?: string;
  authorizationServer?: string;
  /** browser: where the login ends, `http://127.0.0.1:PORT/callback` (for a host that forwards or captures it). */
  redirectUri?: string;
}
/** The host's answer: opened or shown; the final redirect, pasted or captured; or declined. */
export type PresentLoginAnswer = { opened: true } | { redirectUrl: string } | { cancelled: true };
/** Any notification, including names this client does not know yet. */
export interface Notification { method: string; params: unknown }

export interface InitializeResult {
  protocolVersion: '1';
  serverInfo: { name: 'auth-agent'; version: string };
  capabilities: { flows?: Flow[]; events?: EventName[]; [name: string]: unknown };
}
export interface Field { name: 'username' | 'password' | 'token'; label: string; secret: boolean }
/** One logged-in identity of a provider; `default` marks the provider's default account. */
export interface AccountStatus { id: string; user: User; expiresAt: Expiry; default: boolean }
export interface ProviderStatus {
  id: string;
  displayName: string;
  /** The default flow; `flows` lists every one `login({flow})` may name. */
  flow: Flow;
  flows: Flow[];
  fields: Field[];
  /** `state`, `user`, `expiresAt` and `account` describe the account this connection would use. */
  state: 'loggedIn' | 'loggedOut';
  user?: User;
  expiresAt?: Expiry;
  /** That account's id; absent when logged out. */
  account?: string;
  /** Every logged-in account; empty when logged out. */
  accounts: AccountStatus[];
  /** Accounts whose stored session this agent cannot read (keyring locked or out of reach), and why; their requests fail with 1010. */
  unreadable?: { account: string; reason: string }[];
}
/** Where sessions are kept; `reason` says why `store.kind: "auto"` keeps tokens in files; `auto`: nothing stored yet. */
export interface StoreStatus { kind: 'keyring' | 'file' | 'memory' | 'auto'; reason?: string }
export interface StatusResult { store: StoreStatus; providers: ProviderStatus[] }
export interface SubscribeResult { events: EventName[]; status: StatusResult }
/** `account`: the account logged in (added, or replaced when that identity was logged in already). */
export interface LoginResult { provider: string; account: string; user: User; expiresAt: Expiry }
export interface LogoutResult { revoked: boolean }
/** What selectAccount and setDefaultAccount resolve with. */
export interface AccountChoice { provider: string; account: string | null }
/**
 * Whose token and which token: `account` (default: the one this connection
 * selected, else the provider's default), and the token's shape — `scopes`,
 * `audience`, `resource` (RFC 8707, an absolute URI) — for the API called.
 */
export interface TokenChoice {
  account?: string;
  scopes?: string[];
  audience?: string;
  resource?: string;
}
export interface RefreshResult { provider: string; refreshed: boolean; expiresAt: Expiry }
export interface TokenResult { accessToken: string; tokenType: string; expiresAt: Expiry; refreshed?: boolean }
export type Credentials = { username: string; password: string } | { token: string };

export interface CallOptions {
  /** Aborting sends $/cancelRequest and rejects at once with `signal.reason`. */
  signal?: AbortSignal;
  /** Milliseconds before the call is cancelled and rejects with reason `timeout`; Infinity: none. */
  timeout?: number;
}

export interface AuthAgentOptions {
  /** The executable; else $AUTH_AGENT_BIN; else the @auth-agent/PLATFORM package's; else auth-agent on PATH. */
  bin?: string;
  /** Passed as --config; else the agent reads $AUTH_AGENT_CONFIG. */
  config?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Forward the agent's stderr to ours (default) or only keep its tail. */
  stderr?: 'inherit' | 'capture';
  /** Default per-call limit in ms (30000; Infinity: none). */
  timeout?: number;
  /** Milliseconds close() waits before killing the agent (3000). */
  shutdownGrace?: number;
}

export interface Exit { exitCode: number | null; signal: NodeJS.Signals | null }

/** A request failed: the agent answered an error, or the client gave up. */
export declare class AuthAgentError extends Error {
  constructor(
    message: string,
    fields: { code?: number | null; reason: string; retryable?: boolean; data?: Record<string, unknown> },
  );
  /** The JSON-RPC error code, or null when the agent never answered. */
  code: number | null;
  /** Stable camelCase name to branch on: the agent's data.reason or a CLIENT_REASONS value. */
  reason: string;
  retryable: boolean;
  data: Record<string, unknown>;
  /** The provider the error concerns, when the agent named one. */
  readonly provider: string | null;
  static fromResponse(error: unknown): AuthAgentError;
}

/** One subclass per application error reason, for `instanceof`. */
export declare class NotLoggedInError extends AuthAgentError {}
export declare class UnknownProviderError extends AuthAgentError {}
export declare class InvalidCredentialsError extends AuthAgentError {}
export declare class SessionExpiredError extends AuthAgentError {}
export declare class AuthServerUnavailableError extends AuthAgentError {}
export declare class OriginNotAllowedError extends AuthAgentError {}
export declare class ExcessiveRefreshError extends AuthAgentError {}
export declare class LoginDeniedError extends AuthAgentError {}
export declare class LoginTimedOutError extends AuthAgentError {}
export declare class StoreUnavailableError extends AuthAgentError {}
/** `fetch` could not reach the server or ran out of its timeout; retryable. */
export declare class RequestFailedError extends AuthAgentError {}
/** `fetch`'s response body was larger than `maxResponseBytes`. */
export declare class ResponseTooLargeError extends AuthAgentError {}
/** The server refused the requested scopes, audience or resource; the account stays logged in. */
export declare class ScopeNotGrantedError extends AuthAgentError {}
/** Learning an API failed at `data.step`; nothing was learned. */
export declare class DiscoveryFailedError extends AuthAgentError {}
/** Not allowed on this connection (a forward socket's logout, forget, setDefaultAccount, login {resource}); nothing was sent. */
export declare class NotAllowedError extends AuthAgentError {}
/** The configuration is wrong, as the server's answer shows; `data.configKey` names the key to fix (1016). */
export declare class ConfigurationInvalidError extends AuthAgentError {}
/** The class each application reason rejects with. */
export declare const ERROR_CLASSES: Readonly<Record<string, typeof AuthAgentError>>;

/** The agent process ended while the client still needed it. */
export declare class AgentDiedError extends AuthAgentError {
  constructor(exitCode: number | null, signal: NodeJS.Signals | null, stderr: string);
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The agent's last stderr lines. */
  stderr: string;
}

/** What `forget` answers. */
export interface ForgetResult {
  forgotten: boolean;
  revoked: boolean;
}

/** Headers to add; `provider` is not enumerable, so spreading them leaves it out. */
export type SignedHeaders = Record<string, string> & { readonly provider: string | null };

/** The global fetch's RequestInit, plus what the agent's fetch takes. */
export interface AgentRequestInit extends RequestInit, TokenChoice {
  /** Sign with this provider (default: the one whose origins cover the URL). */
  provider?: string;
  /** Milliseconds for the whole call (default: the client's timeout; Infinity: the agent's maximum, 600 s). */
  timeout?: number;
  /** Larger bodies reject with ResponseTooLargeError (default 10 MiB). */
  maxResponseBytes?: number;
  /** `'ifNeeded'`: when the URL answers 401 and no provider covers it, the agent learns the API, logs in and resends. */
  login?: 'ifNeeded';
  /** For that login: open the system browser at its URL (as login's `openBrowser`). */
  openBrowser?: boolean;
}
/** What `login({resource})` would learn and ask for, from a 401's Bearer challenge (or a 403 asking for more scope). */
export interface LoginHint {
  resource: string;
  /** Absent when the metadata naming it is on another origin (`resourceMetadata`), which only `login: 'ifNeeded'` reads. */
  authorizationServer?: string;
  scopes: string[];
  /** The challenge's metadata URL when it is on another origin than the request: not read by a plain fetch. */
  resourceMetadata?: string;
}
/** What the agent did with a fetch. */
export interface FetchInfo {
  /** The provider that signed, or null when none covers the URL. */
  provider: string | null;
  signed: boolean;
  /** Whether the request was sent again after a 401 and a refresh. */
  retried: boolean;
  /** Set when no provider covers the URL and it answered with a Bearer challenge. */
  login: LoginHint | null;
}
/** A standard Response, with what the agent did. */
export interface AgentResponse extends Response {
  readonly authAgent: FetchInfo;
}

/** `loginWaiting`: why a login asks nothing yet. */
export interface LoginWaiting {
  provider?: string | null;
  requestId: string | number | null;
  /** One sentence for the person. */
  message: string;
}

interface AuthAgentEvents {
  userLoggedIn: [UserLoggedIn];
  userLoggedOut: [UserLoggedOut];
  tokenRefreshed: [TokenRefreshed];
  providersChanged: [ProvidersChanged];
  loginPrompt: [LoginPrompt];
  /** The login waits for another login of the same provider (another process's) before it asks anything. */
  loginWaiting: [LoginWaiting];
  notification: [Notification];
}

/** A running auth-agent process and the JSON-RPC session with it. */
export declare class AuthAgent extends EventEmitter {
  /** Spawn the agent; rejects with reason `agentNotFound` if it cannot be started. */
  static start(options?: AuthAgentOptions): Promise<AuthAgent>;
  /** The socket agent $AUTH_AGENT_SOCK (or socketPath) names when it answers within connectTimeout ms; else AuthAgent.start(options). */
  static connect(options?: AuthAgentOptions & { socketPath?: string; connectTimeout?: number }): Promise<AuthAgent>;
  constructor(options?: AuthAgentOptions);

  timeout: number;
  shutdownGrace: number;
  readonly pid: number | undefined;
  /** The agent's last stderr lines. */
  readonly stderrTail: string;
  /** Resolves when the process has ended. */
  readonly exited: Promise<Exit>;

  on<K extends keyof AuthAgentEvents>(event: K, listener: (...args: AuthAgentEvents[K]) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
  once<K extends keyof AuthAgentEvents>(event: K, listener: (...args: AuthAgentEvents[K]) => void): this;
  once(event: string | symbol, listener: (...args: any[]) => void): this;
  off<K extends keyof AuthAgentEvents>(event: K, listener: (...args: AuthAgentEvents[K]) => void): this;
  off(event: string | symbol, listener: (...args: any[]) => void): this;

  request(method: string, params?: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
  notify(method: string, params?: Record<string, unknown>): void;
  /** Sent once; later calls resolve with the same answer. */
  initialize(params?: { clientInfo?: { name: string; version: string } }, options?: CallOptions): Promise<InitializeResult>;
  /**
   * Present this connection's logins yourself (open the URL, show the code, or
   * hand back the redirect): declares the capability in initialize (sent now
   * unless it was already — then this throws, unless a handler was declared
   * before, which this one replaces). Throwing, or no answer within 10 s, makes
   * the agent fall back to `loginPrompt`.
   */
  onPresentLogin(handler: (params: PresentLogin) => PresentLoginAnswer | Promise<PresentLoginAnswer>): this;
  ping(options?: CallOptions): Promise<Record<string, never>>;
  status(options?: CallOptions): Promise<StatusResult>;
  login(params: { provider: string; flow?: Flow; credentials?: Credentials; openBrowser?: boolean }, options?: CallOptions): Promise<LoginResult>;
  /** An API with no configuration: the agent learns it (as provider id `name` when given); the result's `provider` is the learned provider's id. */
  login(params: { resource: string; name?: string; flow?: Flow; openBrowser?: boolean }, options?: CallOptions): Promise<LoginResult>;
  /** Remove a learned provider: logged out, revoked, its registration deleted. */
  forget(params: { provider: string }, options?: CallOptions): Promise<ForgetResult>;
  /** Without `account`, the account this connection would use; `all: true`, every account of the provider. */
  logout(params: { provider: string; account?: string; all?: boolean }, options?: CallOptions): Promise<LogoutResult>;
  /** This connection's account for `provider` (never another program's); `null` or none: the provider's default. */
  selectAccount(params: { provider: string; account?: string | null }, options?: CallOptions): Promise<AccountChoice>;
  /** The provider's default account, for every connection, agent and the command line. */
  setDefaultAccount(params: { provider: string; account: string }, options?: CallOptions): Promise<AccountChoice>;
  /** Finishes a waiting browser login with the redirect URL its browser ended at, pasted back; any connection may send it. */
  completeLogin(params: { requestId: string | number; redirectUrl: string }, options?: CallOptions): Promise<Record<string, never>>;
  /**
   * The headers to add to the request; {} when no provider covers its origin.
   * `provider` (not enumerable) is the provider that signed, for `refresh`.
   */
  sign(
    request: { method: string; url: string; headers?: Record<string, string>; provider?: string } & TokenChoice,
    options?: CallOptions,
  ): Promise<SignedHeaders>;
  /**
   * The global fetch, signed by the agent; after a 401 for the token it sent
   * the agent refreshes once and resends once. Rejects with AuthAgentError
   * subclasses (RequestFailedError, ResponseTooLargeError, NotLoggedInError, ...)
   * or, when `init.signal` aborts, with its reason.
   */
  fetch(input: string | URL | Request, init?: AgentRequestInit): Promise<AgentResponse>;
  /**
   * `fetch` with these defaults under each call's own `init`: a function with
   * the global fetch's signature, for libraries that take one, sending as
   * that account and with that token shape.
   */
  fetcher(defaults?: AgentRequestInit): (input: string | URL | Request, init?: AgentRequestInit) => Promise<AgentResponse>;
  refresh(
    params: { provider: string; failedAuthorization?: string; account?: string },
    options?: CallOptions,
  ): Promise<RefreshResult>;
  token(params: { provider: string; minValidSeconds?: number } & TokenChoice, options?: CallOptions): Promise<TokenResult>;
  subscribe(params?: { events?: EventName[]; providers?: string[] }, options?: CallOptions): Promise<SubscribeResult>;
  unsubscribe(options?: CallOptions): Promise<Record<string, never>>;
  /**
   * Every notification, for `for await`; ends when the agent ends or `signal`
   * aborts, stops listening when the loop is left.
   */
  notifications(options?: { signal?: AbortSignal }): AsyncIterableIterator<Notification>;
  /** shutdown, exit, end of input; kill after shutdownGrace ms. */
  close(): Promise<Exit>;
  /** `await using agent = await AuthAgent.start()` closes it at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The protocol's vocabulary, listed once.
 *
 * Every method, notification and error code the client knows comes from these
 * tables, and test/protocol-table.test.js compares them with
 * schema/openrpc.json: when the schema gains a name the client lacks, that
 * test fails. Adding a notification or an error is one line here.
 */

export const PROTOCOL_VERSION = '1';

/** Requests the host sends; each is answered. */
export const METHODS = Object.freeze([
  'initialize',
  'ping',
  'shutdown',
  'status',
  'login',
  'logout',
  'selectAccount',
  'setDefaultAccount',
  'completeLogin',
  'sign',
  'fetch',
  'forget',
  'refresh',
  'token',
  'subscribe',
  'unsubscribe',
]);

/** Notifications the host sends; never answered. */
export const HOST_NOTIFICATIONS = Object.freeze(['exit', '$/cancelRequest']);

/**
 * Notifications the agent sends, each emitted as an event of that name: the
 * first four to a subscribed host, `loginPrompt` to the host whose
 * device-code or browser login is waiting, `loginWaiting` to the host whose
 * login waits for another one of the same provider.
 */
export const NOTIFICATIONS = Object.freeze([
  'userLoggedIn',
  'userLoggedOut',
  'tokenRefreshed',
  'providersChanged',
  'loginPrompt',
  'loginWaiting',
]);

/**
 * Requests the agent sends the host (ids like "agent-3"), each of which the
 * host answers: `presentLogin` through the handler given to
 * `onPresentLogin`; the others, and `presentLogin` without a handler, with
 * -32601 (`loginFields` goes only to a host that declares it, which this
 * client does not).
 */
export const AGENT_REQUESTS = Object.freeze(['loginFields', 'presentLogin']);

/** What `initialize` declares for a host with an `onPresentLogin` handler: it opens URLs, shows codes and hands back redirects. */
export const PRESENT_LOGIN = Object.freeze({ openUrl: true, showCode: true, askRedirect: true });

/**
 * Every error code the agent answers with, and what it means when the
 * agent's `data` does not say: the JSON-RPC standard codes and the
 * application ones, whose reason matches the agent's `data.reason`.
 */
export const ERRORS = Object.freeze({
  [-32700]: { reason: 'parseError', retryable: false },
  [-32600]: { reason: 'invalidRequest', retryable: false },
  [-32601]: { reason: 'methodNotFound', retryable: false },
  [-32602]: { reason: 'invalidParams', retryable: false },
  [-32603]: { reason: 'internalError', retryable: false },
  [-32800]: { reason: 'requestCancelled', retryable: false },
  1001: { reason: 'notLoggedIn', retryable: false },
  1002: { reason: 'unknownProvider', retryable: false },
  1003: { reason: 'invalidCredentials', retryable: false },
  1004: { reason: 'sessionExpired', retryable: false },
  1005: { reason: 'authServerUnavailable', retryable: true },
  1006: { reason: 'originNotAllowed', retryable: false },
  1007: { reason: 'excessiveRefresh', retryable: false },
  1008: { reason: 'loginDenied', retryable: false },
  1009: { reason: 'loginTimedOut', retryable: false },
  1010: { reason: 'storeUnavailable', retryable: true },
  1011: { reason: 'requestFailed', retryable: true },
  1012: { reason: 'responseTooLarge', retryable: false },
  1013: { reason: 'scopeNotGranted', retryable: false },
  1014: { reason: 'discoveryFailed', retryable: false },
  1015: { reason: 'notAllowed', retryable: false },
  1016: { reason: 'configurationInvalid', retryable: false },
});

/** Reasons for failures the client detects itself; no agent answer carries them. */
export const CLIENT_REASONS = Object.freeze({
  timeout: 'timeout',
  agentDied: 'agentDied',
  agentNotFound: 'agentNotFound',
  closed: 'closed',
});

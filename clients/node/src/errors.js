import { CLIENT_REASONS, ERRORS } from './protocol.js';

/**
 * A request failed: the agent answered an error, or the client gave up.
 *
 * `code` is the JSON-RPC error code (`null` when the failure never reached the
 * agent), `reason` a stable camelCase name to branch on (the agent's
 * `data.reason`, or one of CLIENT_REASONS), `retryable` whether trying again
 * unchanged may succeed, `data` the agent's error data as sent. Messages never
 * contain tokens or passwords: the agent's do not, and the client's own name
 * only methods.
 */
export class AuthAgentError extends Error {
  constructor(message, { code = null, reason, retryable = false, data = {} } = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.reason = reason;
    this.retryable = retryable;
    this.data = data;
  }

  /** The provider the error concerns, when the agent named one. */
  get provider() {
    return typeof this.data.provider === 'string' ? this.data.provider : null;
  }

  /** The exception for a JSON-RPC `error` member. */
  static fromResponse(error) {
    const code = Number.isInteger(error?.code) ? error.code : null;
    const isObject = error?.data && typeof error.data === 'object' && !Array.isArray(error.data);
    const data = isObject ? error.data : {};
    const kind = code === null ? undefined : ERRORS[code];
    const reason = typeof data.reason === 'string' ? data.reason : (kind?.reason ?? 'unknownError');
    const retryable = typeof data.retryable === 'boolean' ? data.retryable : (kind?.retryable ?? false);
    const message = typeof error?.message === 'string' ? error.message : reason;
    const ErrorClass = ERROR_CLASSES[reason] ?? AuthAgentError;
    return new ErrorClass(message, { code, reason, retryable, data });
  }
}

/**
 * The agent process ended while the client still needed it: every pending and
 * later call rejects with this. `exitCode` and `signal` are as Node reports
 * them, `stderr` the agent's last stderr lines, kept to diagnose a crash.
 */
export class AgentDiedError extends AuthAgentError {
  constructor(exitCode, signal, stderr) {
    const lastLine = stderr.trim().split('\n').at(-1);
    const how = signal ? `was killed by ${signal}` : `exited with code ${exitCode}`;
    super(`auth-agent ${how}${lastLine ? `; last stderr line: ${lastLine}` : ''}`, {
      reason: CLIENT_REASONS.agentDied,
    });
    this.exitCode = exitCode;
    this.signal = signal;
    this.stderr = stderr;
  }
}

/*
 * One subclass per application error reason, so that a host can branch with
 * `instanceof` as well as on `reason`; test/errors.test.js fails when ERRORS
 * has a reason without one.
 */
export class NotLoggedInError extends AuthAgentError {}
export class UnknownProviderError extends AuthAgentError {}
export class InvalidCredentialsError extends AuthAgentError {}
export class SessionExpiredError extends AuthAgentError {}
export class AuthServerUnavailableError extends AuthAgentError {}
export class OriginNotAllowedError extends AuthAgentError {}
export class ExcessiveRefreshError extends AuthAgentError {}
export class LoginDeniedError extends AuthAgentError {}
export class LoginTimedOutError extends AuthAgentError {}
export class StoreUnavailableError extends AuthAgentError {}
/** `fetch` could not reach the server or ran out of `timeoutSeconds`; retryable. */
export class RequestFailedError extends AuthAgentError {}
/** `fetch`'s response body was larger than `maxResponseBytes`. */
export class ResponseTooLargeError extends AuthAgentError {}
/** The server refused the requested scopes, audience or resource; the account stays logged in. */
export class ScopeNotGrantedError extends AuthAgentError {}
/** Learning an API failed at `data.step` (resourceMetadata, serverMetadata, registration, login); nothing was learned. */
export class DiscoveryFailedError extends AuthAgentError {}
/** Not allowed on this connection (a forward socket's logout, forget, setDefaultAccount, login {resource}); nothing was sent. */
export class NotAllowedError extends AuthAgentError {}
/** 1016: the configuration is wrong, as the server's answer shows; `data.configKey` names the key to fix. */
export class ConfigurationInvalidError extends AuthAgentError {}

/** The class `fromResponse` gives each application reason; other reasons get AuthAgentError. */
export const ERROR_CLASSES = Object.freeze({
  notLoggedIn: NotLoggedInError,
  unknownProvider: UnknownProviderError,
  invalidCredentials: InvalidCredentialsError,
  sessionExpired: SessionExpiredError,
  authServerUnavailable: AuthServerUnavailableError,
  originNotAllowed: OriginNotAllowedError,
  excessiveRefresh: ExcessiveRefreshError,
  loginDenied: LoginDeniedError,
  loginTimedOut: LoginTimedOutError,
  storeUnavailable: StoreUnavailableError,
  requestFailed: RequestFailedError,
  responseTooLarge: ResponseTooLargeError,
  scopeNotGranted: ScopeNotGrantedError,
  discoveryFailed: DiscoveryFailedError,
  notAllowed: NotAllowedError,
  configurationInvalid: ConfigurationInvalidError,
});

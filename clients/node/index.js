/**
 * Node client for auth-agent: a process that keeps the user's logins and
 * tokens and signs HTTP requests, spoken to with JSON-RPC over stdin/stdout.
 */
export { AuthAgent } from './src/agent.js';
export {
  AgentDiedError,
  AuthAgentError,
  AuthServerUnavailableError,
  DiscoveryFailedError,
  ERROR_CLASSES,
  ExcessiveRefreshError,
  InvalidCredentialsError,
  LoginDeniedError,
  LoginTimedOutError,
  ConfigurationInvalidError,
  NotAllowedError,
  NotLoggedInError,
  OriginNotAllowedError,
  RequestFailedError,
  ResponseTooLargeError,
  ScopeNotGrantedError,
  SessionExpiredError,
  StoreUnavailableError,
  UnknownProviderError,
} from './src/errors.js';
export { findAgent } from './src/locate.js';
export {
  AGENT_REQUESTS, CLIENT_REASONS, ERRORS, HOST_NOTIFICATIONS, METHODS, NOTIFICATIONS, PROTOCOL_VERSION,
} from './src/protocol.js';
